--[[
wass-chat job_submit plugin (Slurm job_submit/lua, Lua 5.1).

Applies a placement carried in the job's comment, never anything else:

  decision mode   wass:v1:run=R;task=T;node=N[;exp=EPOCH]
                  pins the job to node N (req_nodes) when N is in the job's partition (or the
                  default partition), the job fits N, and the token has not expired.
  inference mode  wass:v1:run=R;task=T;mode=infer;model=ID;dim=F;cand=N1,N2,...;x=v1,v2,...
                  x holds F features per candidate node; the exported policy head (Linear-ReLU-
                  Linear, POLICY_HEAD below) scores each eligible candidate and the job is
                  pinned to the best one. A token whose model id differs from the installed
                  head is stale and ignored.

Safety: every step runs inside pcall; a malformed, stale or inapplicable token leaves the job
exactly as submitted, the reason goes to slurmctld's log (and AdminComment when a node is set);
the plugin always returns slurm.SUCCESS, so it never rejects a job Slurm would accept.
Node states: Slurm 22.05's Lua API exposes partitions (name, nodes) but no node state, so down
or drained nodes cannot be seen here; the client checks states when it plans, and a job pinned
to a node that went down meanwhile stays pending (never rejected). NODE_TABLE (cores, memory,
GPUs per node, written by `wass-chat plugin install`) guards against pinning a job to a node
too small for it, which Slurm would reject.
--]]

local POLICY_HEAD = nil -- @WASS_POLICY_HEAD@
local NODE_TABLE = nil -- @WASS_NODE_TABLE@

local MAX_COMMENT = 65536
local MAX_CANDIDATES = 256
local MAX_DIM = 4096
local UNSET = 65534 -- NO_VAL16 and above mean "not given" for Slurm's integer fields

local wass = {}

local function log(fmt, ...)
    if slurm and slurm.log_info then
        slurm.log_info("wass: " .. fmt, ...)
    end
end

-- Expand a Slurm hostlist ("n1,n[3-5],gpu[01-02]") into a set of names.
local function expand_hostlist(expr)
    local names = {}
    local items, depth, start = {}, 0, 1
    for i = 1, #expr do
        local c = string.sub(expr, i, i)
        if c == "[" then depth = depth + 1
        elseif c == "]" then depth = depth - 1
        elseif c == "," and depth == 0 then
            items[#items + 1] = string.sub(expr, start, i - 1)
            start = i + 1
        end
    end
    items[#items + 1] = string.sub(expr, start)
    local function expand(item)
        local prefix, ranges, rest = string.match(item, "^([^%[]*)%[([^%]]*)%](.*)$")
        if not prefix then
            if item ~= "" then names[item] = true end
            return
        end
        for range in string.gmatch(ranges, "[^,]+") do
            local a, b = string.match(range, "^(%d+)%-(%d+)$")
            if not a then a = string.match(range, "^(%d+)$"); b = a end
            if not a then error("bad hostlist range " .. range) end
            local width = #a
            local lo, hi = tonumber(a), tonumber(b)
            if hi - lo > 100000 then error("hostlist range too large") end
            for n = lo, hi do
                expand(prefix .. string.format("%0" .. width .. "d", n) .. rest)
            end
        end
    end
    for _, item in ipairs(items) do expand(item) end
    return names
end
wass.expand_hostlist = expand_hostlist

-- The token's fields, or nil and a reason. Returns nil, nil when the comment has no token.
-- Plain searches (memchr) rather than patterns: an inference token is ~10 KB, and a pattern
-- scan over it costs ~10x more per byte.
local WHITESPACE = { " ", "\t", "\n", "\v", "\f", "\r" } -- what %s matches
local function parse_token(comment)
    if type(comment) ~= "string" then return nil, nil end
    local s = string.find(comment, "wass:v1:", 1, true)
    if not s then return nil, nil end
    if #comment > MAX_COMMENT then return nil, "comment too long" end
    local stop = #comment + 1 -- the token ends at the first whitespace
    for _, space in ipairs(WHITESPACE) do
        local at = string.find(comment, space, s + 8, true)
        if at and at < stop then stop = at end
    end
    local body = string.sub(comment, s + 8, stop - 1)
    local fields, pos, len = {}, 1, #body
    while pos <= len do
        local semi = string.find(body, ";", pos, true) or (len + 1)
        if semi > pos then
            local pair = string.sub(body, pos, semi - 1)
            local k = string.match(pair, "^([%a_]+)=")
            if not k or string.find(pair, "=", #k + 2, true) then return nil, "malformed field" end
            if fields[k] then return nil, "duplicate field " .. k end
            fields[k] = string.sub(pair, #k + 2)
        end
        pos = semi + 1
    end
    return fields, nil
end
wass.parse_token = parse_token

local function valid_node_name(name)
    return type(name) == "string" and #name > 0 and #name <= 64
        and string.match(name, "^[%w_%.%-]+$") ~= nil
end

-- Node sets of the partitions the job may run in (a node must be in every one of them).
local function partition_sets(job_desc, part_list)
    local wanted = {}
    local requested = job_desc.partition
    if type(requested) == "string" and requested ~= "" then
        for p in string.gmatch(requested, "[^,]+") do wanted[#wanted + 1] = p end
    end
    local sets = {}
    for key, part in pairs(part_list or {}) do -- 22.05: keyed by partition name
        local name = part.name or key
        local is_default = part.flag_default ~= nil and part.flag_default ~= 0
        local take = false
        if #wanted == 0 then take = is_default
        else
            for _, w in ipairs(wanted) do if w == name then take = true end end
        end
        if take then
            local nodes = part.nodes
            if type(nodes) ~= "string" then return nil, "partition " .. tostring(name) .. " has no node list" end
            sets[#sets + 1] = nodes == "ALL" and "ALL" or expand_hostlist(nodes)
        end
    end
    if #sets == 0 or (#wanted > 0 and #sets ~= #wanted) then
        return nil, "job partition not found"
    end
    return sets, nil
end

local function num(v)
    if type(v) ~= "number" or v ~= v or v >= UNSET then return nil end
    return v
end

-- Whether the job fits node `name` (cores, memory, GPUs) per NODE_TABLE; a reason if not.
local function fits(job_desc, name)
    if NODE_TABLE == nil then return true end
    local node = NODE_TABLE[name]
    if node == nil then return false, "node " .. name .. " is not in the node table" end
    local per_task = num(job_desc.cpus_per_task) or 1
    local tasks = num(job_desc.num_tasks) or 1
    local cpus = math.max(num(job_desc.pn_min_cpus) or 1, per_task * tasks, num(job_desc.min_cpus) or 1)
    if cpus > node.cores then return false, "job needs " .. cpus .. " cores, " .. name .. " has " .. node.cores end
    local mem = job_desc.pn_min_memory
    if type(mem) == "number" and mem < 2 ^ 62 and mem > node.memory_mb then
        return false, "job needs more memory than " .. name .. " has"
    end
    local gres = job_desc.tres_per_node
    if type(gres) == "string" then
        local gpus = tonumber(string.match(gres, "gpu[^,]-:(%d+)") or "0") or 0
        if gpus > node.gpus then return false, "job needs more GPUs than " .. name .. " has" end
    end
    return true
end

-- Why `name` may not be applied to this job, or nil when it may.
local function refusal(job_desc, sets, name)
    if not valid_node_name(name) then return "invalid node name" end
    for _, set in ipairs(sets) do
        if set ~= "ALL" and not set[name] then return "node " .. name .. " is not in the job's partition" end
    end
    local ok, why = fits(job_desc, name)
    if not ok then return why end
    return nil
end

-- Policy head: relu(W1 x + b1) . w2 + b2, x = the candidate's features.
local function score(head, x, offset)
    local hidden, w1, b1, w2 = #head.b1, head.w1, head.b1, head.w2
    local dim = head.dim
    local total = head.b2
    for j = 1, hidden do
        local row = w1[j]
        local h = b1[j]
        for k = 1, dim do h = h + row[k] * x[offset + k] end
        if h > 0 then total = total + w2[j] * h end
    end
    return total
end
wass.score = score

-- The same sum compiled once per script load into straight-line code: the weights become
-- constants and a candidate's features locals, so each term costs about three virtual-machine
-- instructions instead of six (~4x faster under PUC Lua 5.1, which Debian's job_submit/lua
-- links; it cannot load LuaJIT). The additions happen in the same order as in `score`, so the
-- scores are bit-identical. Heads wider than Lua's 200 locals allow keep the loop.
local MAX_COMPILED_DIM = 180
local function compile_head(head)
    if type(head) ~= "table" or type(loadstring) ~= "function" then return nil end
    local dim = head.dim
    if type(dim) ~= "number" or dim < 1 or dim > MAX_COMPILED_DIM then return nil end
    local function lit(v) return string.format("%.17g", v) end
    local names, loads = {}, {}
    for k = 1, dim do
        names[k] = "x" .. k
        loads[k] = "x[o + " .. k .. "]"
    end
    local src = {
        "local _, x, o = ...\nlocal ", table.concat(names, ", "), " = ", table.concat(loads, ", "),
        "\nlocal h\nlocal total = ", lit(head.b2), "\n",
    }
    for j = 1, #head.b1 do
        local row = head.w1[j]
        local terms = { lit(head.b1[j]) }
        for k = 1, dim do terms[k + 1] = lit(row[k]) .. " * x" .. k end
        src[#src + 1] = "h = " .. table.concat(terms, " + ") .. "\n"
        src[#src + 1] = "if h > 0 then total = total + " .. lit(head.w2[j]) .. " * h end\n"
    end
    src[#src + 1] = "return total\n"
    return loadstring(table.concat(src), "=wass policy head") -- nil if Lua refuses it
end
local ok_compiled, compiled = pcall(compile_head, POLICY_HEAD)
local score_head = (ok_compiled and compiled) or score
wass.score_head = score_head
wass.head_compiled = ok_compiled and compiled ~= nil
wass.head = POLICY_HEAD

local function parse_numbers(text, limit)
    local values, n, huge = {}, 0, math.huge
    for item in string.gmatch(text, "[^,]+") do
        n = n + 1
        if n > limit then return nil end
        local v = tonumber(item)
        if v == nil or v ~= v or v == huge or v == -huge then return nil end
        values[n] = v
    end
    return values
end

-- The inference-mode choice: the eligible candidate with the highest head score.
local function infer(job_desc, sets, fields)
    local head = POLICY_HEAD
    if head == nil then return nil, "no policy head installed" end
    if fields.model ~= head.id then return nil, "stale token: model " .. tostring(fields.model) .. " is not " .. head.id end
    local dim = tonumber(fields.dim)
    if dim ~= head.dim then return nil, "feature width does not match the head" end
    local cand = {}
    for c in string.gmatch(fields.cand or "", "[^,]+") do
        cand[#cand + 1] = c
        if #cand > MAX_CANDIDATES then return nil, "too many candidates" end
    end
    if #cand == 0 then return nil, "no candidates" end
    local x = parse_numbers(fields.x or "", #cand * dim)
    if x == nil or #x ~= #cand * dim then return nil, "feature vector malformed" end
    local best, best_score = nil, nil
    for i, name in ipairs(cand) do
        if refusal(job_desc, sets, name) == nil then
            local s = score_head(head, x, (i - 1) * dim)
            if best_score == nil or s > best_score then best, best_score = name, s end
        end
    end
    if best == nil then return nil, "no eligible candidate" end
    return best, nil
end

-- Decide, then apply; returns a one-line account of what happened (nil: no token).
function wass.apply(job_desc, part_list)
    local fields, err = parse_token(job_desc.comment)
    if fields == nil then return err and ("ignored: " .. err) or nil end
    local t0 = os.clock()
    local exp = fields.exp and tonumber(fields.exp)
    if fields.exp and (exp == nil or os.time() > exp) then return "ignored: stale token (expired)" end
    local min_nodes = num(job_desc.min_nodes)
    if min_nodes ~= nil and min_nodes > 1 then return "ignored: job asks for several nodes" end
    local sets, why = partition_sets(job_desc, part_list)
    if sets == nil then return "ignored: " .. why end
    local node, mode
    if fields.mode == "infer" then
        mode = "infer"
        node, why = infer(job_desc, sets, fields)
        if node == nil then return "ignored: " .. why end
    elseif fields.mode == nil or fields.mode == "decision" then
        mode = "decision"
        node = fields.node
        why = refusal(job_desc, sets, node)
        if why then return "ignored: " .. why end
    else
        return "ignored: unknown mode"
    end
    local current = job_desc.req_nodes
    if current ~= nil and current ~= "" and current ~= node then
        return "ignored: job already requires " .. tostring(current)
    end
    local note = string.format("wass:%s node=%s (%.3f ms)", mode, node, (os.clock() - t0) * 1000)
    job_desc.req_nodes = node -- the only change to the job, made last
    pcall(function() job_desc.admin_comment = note end)
    return "applied " .. note
end

function slurm_job_submit(job_desc, part_list, submit_uid)
    local ok, result = pcall(wass.apply, job_desc, part_list)
    if not ok then
        pcall(log, "%s", "error, job unchanged: " .. tostring(result))
    elseif result ~= nil then
        pcall(log, "%s", tostring(result))
    end
    return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
    return slurm.SUCCESS
end

-- For the test harness (a script that returns nothing loads cleanly in slurmctld).
WASS_PLUGIN = wass
