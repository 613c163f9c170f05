--[[
Runs wass-chat's job_submit.lua outside slurmctld, under a stub `slurm` table: the plugin's
tests and `wass-chat plugin bench` drive it.

  lua5.1 harness.lua PLUGIN CASES

CASES is a Lua chunk returning { parts = {...}, jobs = { {field=value...}, ... } }; `parts` is
the part_list (keyed by partition name, as slurmctld 22.05 passes it). For every job the
harness calls slurm_job_submit and prints one tab-separated line:

  index  return_code  req_nodes|-  changed_fields(comma)|-  errors  microseconds

Microseconds are CPU time (os.clock) of that one call, so other work on the machine inflates
them less than it would wall time.
--]]

local plugin_path, cases_path = arg[1], arg[2]
local logs = {}
slurm = {
    SUCCESS = 0,
    ERROR = -1,
    log_info = function(fmt, ...) logs[#logs + 1] = string.format(fmt, ...) end,
    log_user = function(fmt, ...) end,
}
dofile(plugin_path)
local cases = dofile(cases_path)

local function snapshot(t)
    local copy = {}
    for k, v in pairs(t) do copy[k] = v end
    return copy
end

for i, job in ipairs(cases.jobs) do
    local before = snapshot(job)
    logs = {}
    local t0 = os.clock()
    local ok, rc = pcall(slurm_job_submit, job, cases.parts, 0)
    local us = (os.clock() - t0) * 1e6
    local changed = {}
    local keys = {}
    for k in pairs(before) do keys[k] = true end
    for k in pairs(job) do keys[k] = true end
    for k in pairs(keys) do
        if before[k] ~= job[k] then changed[#changed + 1] = k end
    end
    table.sort(changed)
    local errors = 0
    for _, line in ipairs(logs) do
        if string.find(line, "error, job unchanged", 1, true) then errors = errors + 1 end
    end
    if not ok then errors = errors + 1; rc = "raised" end
    io.write(string.format("%d\t%s\t%s\t%s\t%d\t%.1f\n", i, tostring(rc),
        tostring(job.req_nodes or "-"), #changed > 0 and table.concat(changed, ",") or "-",
        errors, us))
end
