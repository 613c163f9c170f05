/* Python binding of the batch core: sim.batch._core.run(...), called by sim/batch/compiled.py
 * (which prepares contiguous int64/float64 arrays and reads the results back). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

#ifndef CORE_SOURCE_HASH
#define CORE_SOURCE_HASH "unknown"
#endif

#define N_JOB_ARRAYS 14
#define N_CONFIG 20

typedef struct { Py_buffer views[32]; int count; } Views;

static const void *view_of(Views *v, PyObject *obj, Py_ssize_t bytes, const char *what) {
    if (v->count >= 32) {
        PyErr_SetString(PyExc_RuntimeError, "too many arrays");
        return NULL;
    }
    Py_buffer *view = &v->views[v->count];
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    v->count++;
    if (view->len != bytes) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", what, bytes, view->len);
        return NULL;
    }
    return view->buf;
}

static void release_views(Views *v) {
    for (int k = 0; k < v->count; k++) PyBuffer_Release(&v->views[k]);
}

static int call_progress(void *ctx, int64_t done, int64_t total) {
    PyObject *out = PyObject_CallFunction((PyObject *)ctx, "LL", (long long)done, (long long)total);
    if (!out) return -1;
    Py_DECREF(out);
    return 0;
}

static void free_engine(Engine *e) {
    if (e->jobs_on) {
        for (int64_t i = 0; i < e->n_nodes; i++) free(e->jobs_on[i].a);
    }
    void *blocks[] = {e->free_cpu, e->free_mem, e->free_gpu, e->ready_at, e->idle_since, e->last, e->busy_cpu_s,
                      e->off_s, e->state, e->energy, e->jobs_on, e->unmet, e->child_ptr, e->child_idx, e->eligible_at,
                      e->start, e->end, e->expected_end, e->alloc_ptr, e->alloc_nodes, e->run_pos, e->running,
                      e->arrived, e->backfilled, e->started_now, e->usage, e->running_cpus, e->seen, e->heap.a,
                      e->queue.a, e->cand, e->cand2, e->times, e->tmp_jobs, e->part_blocked, e->node_blocked,
                      e->resv_head, e->resv, e->resv_nodes.a, e->plain_t, e->plain_i};
    for (size_t k = 0; k < sizeof(blocks) / sizeof(blocks[0]); k++) free(blocks[k]);
}

#define ALLOC(ptr, count) do { (ptr) = calloc((size_t)((count) > 0 ? (count) : 1), sizeof(*(ptr))); if (!(ptr)) goto nomem; } while (0)

static PyObject *run(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *jobs, *static_obj, *node_ints, *node_power, *pptr_obj, *pidx_obj, *config, *progress;
    if (!PyArg_ParseTuple(args, "O!OO!O!OOO!O", &PyTuple_Type, &jobs, &static_obj, &PyTuple_Type, &node_ints,
                          &PyTuple_Type, &node_power, &pptr_obj, &pidx_obj, &PyTuple_Type, &config, &progress))
        return NULL;
    if (PyTuple_GET_SIZE(jobs) != N_JOB_ARRAYS || PyTuple_GET_SIZE(node_ints) != 3 || PyTuple_GET_SIZE(node_power) != 5 ||
        PyTuple_GET_SIZE(config) != N_CONFIG) {
        PyErr_SetString(PyExc_ValueError, "wrong argument layout");
        return NULL;
    }
    int64_t cfg[N_CONFIG];
    for (int k = 0; k < N_CONFIG; k++) {
        cfg[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(config, k));
        if (cfg[k] == -1 && PyErr_Occurred()) return NULL;
    }
    Engine e;
    memset(&e, 0, sizeof(e));
    Views views;
    views.count = 0;
    PyObject *result = NULL;
    Py_buffer part_view;
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(jobs, 0), &part_view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    e.n = part_view.len / 8;
    PyBuffer_Release(&part_view);
    Py_buffer cap_view;
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(node_ints, 0), &cap_view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    e.n_nodes = cap_view.len / 8;
    PyBuffer_Release(&cap_view);
    Py_buffer pptr_view;
    if (PyObject_GetBuffer(pptr_obj, &pptr_view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    e.n_parts = pptr_view.len / 8 - 1;
    PyBuffer_Release(&pptr_view);

    const int64_t **job_arrays[N_JOB_ARRAYS] = {&e.part, &e.nn, &e.c, &e.m, &e.g, &e.run_s, &e.est, &e.limit,
                                                 &e.submit, &e.earliest, &e.tier, &e.user, &e.dep_ptr, &e.dep_parent};
    for (int k = 0; k < 12; k++) {
        *job_arrays[k] = view_of(&views, PyTuple_GET_ITEM(jobs, k), e.n * 8, "job column");
        if (!*job_arrays[k]) goto done;
    }
    e.dep_ptr = view_of(&views, PyTuple_GET_ITEM(jobs, 12), (e.n + 1) * 8, "dep_ptr");
    if (!e.dep_ptr) goto done;
    e.dep_parent = view_of(&views, PyTuple_GET_ITEM(jobs, 13), e.dep_ptr[e.n] * 8, "dep_parent");
    if (!e.dep_parent) goto done;
    e.static_prio = view_of(&views, static_obj, e.n * 8, "static priority");
    if (!e.static_prio) goto done;
    const int64_t **caps[3] = {&e.cap_cpu, &e.cap_mem, &e.cap_gpu};
    for (int k = 0; k < 3; k++) {
        *caps[k] = view_of(&views, PyTuple_GET_ITEM(node_ints, k), e.n_nodes * 8, "node capacity");
        if (!*caps[k]) goto done;
    }
    const double **watts[5] = {&e.idle_w, &e.cpu_w, &e.gpu_w, &e.off_w, &e.boot_w};
    for (int k = 0; k < 5; k++) {
        *watts[k] = view_of(&views, PyTuple_GET_ITEM(node_power, k), e.n_nodes * 8, "node power");
        if (!*watts[k]) goto done;
    }
    e.pnode_ptr = view_of(&views, pptr_obj, (e.n_parts + 1) * 8, "partition pointers");
    if (!e.pnode_ptr) goto done;
    e.pnode_idx = view_of(&views, pidx_obj, e.pnode_ptr[e.n_parts] * 8, "partition nodes");
    if (!e.pnode_idx) goto done;

    e.order = cfg[0]; e.backfill = cfg[1]; e.best_fit = cfg[2]; e.bf_interval = cfg[3]; e.bf_window = cfg[4];
    e.depth = cfg[5]; e.max_test = cfg[6]; e.calc_period = cfg[7]; e.w_age = cfg[8]; e.w_fs = cfg[9];
    e.max_age = cfg[10]; e.half_life = cfg[11]; e.power = cfg[12]; e.suspend = cfg[13]; e.boot_s = cfg[14];
    e.n_users = cfg[15]; e.t0 = cfg[16]; e.has_deps = (int)cfg[17]; e.completing = cfg[18];
    e.bf_resolution = cfg[19];

    int64_t N = e.n_nodes, n = e.n;
    ALLOC(e.free_cpu, N); ALLOC(e.free_mem, N); ALLOC(e.free_gpu, N); ALLOC(e.ready_at, N); ALLOC(e.idle_since, N);
    ALLOC(e.last, N); ALLOC(e.busy_cpu_s, N); ALLOC(e.off_s, N); ALLOC(e.state, N); ALLOC(e.energy, N);
    ALLOC(e.jobs_on, N); ALLOC(e.cand, N); ALLOC(e.cand2, N); ALLOC(e.part_blocked, e.n_parts);
    ALLOC(e.node_blocked, N); ALLOC(e.resv_head, N); ALLOC(e.plain_t, 2 * N); ALLOC(e.plain_i, 65 * N);
    e.cap_times = 1 + 2 * N;
    ALLOC(e.times, e.cap_times);
    e.cap_tmp = N + 1;
    ALLOC(e.tmp_jobs, e.cap_tmp);
    for (int64_t i = 0; i < N; i++) {
        e.free_cpu[i] = e.cap_cpu[i];
        e.free_mem[i] = e.cap_mem[i];
        e.free_gpu[i] = e.cap_gpu[i];
        e.ready_at[i] = e.idle_since[i] = e.last[i] = e.t0;
        e.resv_head[i] = -1;
    }
    ALLOC(e.unmet, n); ALLOC(e.child_ptr, n + 1); ALLOC(e.child_idx, e.dep_ptr[n]); ALLOC(e.eligible_at, n);
    ALLOC(e.start, n); ALLOC(e.end, n); ALLOC(e.expected_end, n); ALLOC(e.alloc_ptr, n + 1); ALLOC(e.run_pos, n);
    ALLOC(e.running, n); ALLOC(e.arrived, n); ALLOC(e.backfilled, n); ALLOC(e.started_now, n);
    ALLOC(e.usage, e.n_users); ALLOC(e.running_cpus, e.n_users); ALLOC(e.seen, e.n_users);
    for (int64_t j = 0; j < n; j++) {
        e.start[j] = e.end[j] = -1;
        e.alloc_ptr[j + 1] = e.alloc_ptr[j] + e.nn[j];
        e.unmet[j] = e.dep_ptr[j + 1] - e.dep_ptr[j];
        for (int64_t k = e.dep_ptr[j]; k < e.dep_ptr[j + 1]; k++) e.child_ptr[e.dep_parent[k] + 1]++;
    }
    for (int64_t j = 0; j < n; j++) e.child_ptr[j + 1] += e.child_ptr[j];
    {
        int64_t *fill;
        ALLOC(fill, n + 1);
        memcpy(fill, e.child_ptr, (size_t)(n + 1) * sizeof(int64_t));
        for (int64_t j = 0; j < n; j++) {
            for (int64_t k = e.dep_ptr[j]; k < e.dep_ptr[j + 1]; k++) e.child_idx[fill[e.dep_parent[k]]++] = j;
        }
        free(fill);
    }
    ALLOC(e.alloc_nodes, e.alloc_ptr[n]);
    e.bf_tick = e.prio_tick = -1;
    e.bf_last = e.t0 - e.bf_interval;
    e.bf_cadence = 0;
    for (int64_t j = 0; j < n; j++) {
        if (heap_push(&e.heap, e.earliest[j], EV_ARRIVE, j)) goto nomem;
    }
    if (e.power) {
        for (int64_t i = 0; i < N; i++) {
            if (heap_push(&e.heap, e.t0 + e.suspend, EV_OFF, i)) goto nomem;
        }
    }
    int status = engine_run(&e, progress == Py_None ? NULL : call_progress, progress);
    if (status == -2) goto done; /* the progress callback raised */
    if (status) goto nomem;
    int64_t t_end = e.t0;
    for (int64_t j = 0; j < n; j++) {
        if (e.end[j] > t_end) t_end = e.end[j];
    }
    result = Py_BuildValue("(y#y#y#y#y#y#y#LLLL)", (char *)e.start, (Py_ssize_t)(n * 8), (char *)e.end,
                           (Py_ssize_t)(n * 8), (char *)e.backfilled, (Py_ssize_t)n, (char *)e.alloc_nodes,
                           (Py_ssize_t)(e.alloc_ptr[n] * 8), (char *)e.energy, (Py_ssize_t)(N * 8),
                           (char *)e.busy_cpu_s, (Py_ssize_t)(N * 8), (char *)e.off_s, (Py_ssize_t)(N * 8),
                           (long long)e.events, (long long)e.passes_main, (long long)e.passes_bf, (long long)t_end);
    goto done;
nomem:
    if (!PyErr_Occurred()) PyErr_NoMemory();
done:
    free_engine(&e);
    release_views(&views);
    return result;
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "Run one batch simulation (see sim/batch/compiled.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "sim.batch._core", "The batch simulator's compiled core.", -1, methods};

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "SOURCE_HASH", CORE_SOURCE_HASH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
