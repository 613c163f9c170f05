/* sim._core: the Run type (one simulation: state, network, event loop, estimates, fork) and
 * the module. sim/fast.py is its only Python user. */
#include "core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern PyTypeObject InstanceType;
Shared *instance_shared(PyObject *obj);
void shared_release(Shared *s);

#define ALLOC(p, n) ((p) = calloc((size_t)((n) ? (n) : 1), sizeof(*(p))))
#define DUP(d, s, n) (ALLOC(d, n) && memcpy(d, s, sizeof(*(d)) * (size_t)(n)) == (d))

static void run_free_arrays(Run *r) {
    int nn = r->sh ? r->sh->nn : 0, nf = r->sh ? r->sh->nf : 0;
    free(r->node_of); free(r->parents_left); free(r->missing); free(r->ready); free(r->start);
    free(r->end); free(r->free_cores); free(r->free_memory); free(r->free_gpus); free(r->heads);
    for (int i = 0; r->queues && i < nn; i++) free(r->queues[i].a);
    for (int i = 0; r->running && i < nn; i++) free(r->running[i].a);
    for (int i = 0; r->held_until && i < nn; i++) free(r->held_until[i].a);
    for (int i = 0; r->held_cores && i < nn; i++) free(r->held_cores[i].a);
    for (int i = 0; r->located && i < nf; i++) free(r->located[i].a);
    for (int i = 0; r->eager && i < nf; i++) free(r->eager[i].a);
    free(r->queues); free(r->running); free(r->held_until); free(r->held_cores); free(r->located);
    free(r->eager); free(r->version); free(r->present); free(r->whead); free(r->in_flight);
    free(r->wp_task.a); free(r->wp_next.a); free(r->t_estimate.a); free(r->t_start.a);
    free(r->t_end.a); free(r->t_file.a); free(r->t_src.a); free(r->t_dst.a); free(r->theap.a);
    free(r->started.a); free(r->dirty); free(r->batch.a); free(r->deciding.a); free(r->grp);
    free(r->gpool.a); free(r->pc_version); free(r->pc_now); free(r->pc_free); free(r->pc_off);
    free(r->pc_last); free(r->re_version); free(r->re_ends); free(r->re_n);
    net_free(&r->net);
}

static int alloc_caches(Run *r) {
    const Shared *sh = r->sh;
    int total = 0;
    if (!ALLOC(r->pc_off, sh->nn) || !ALLOC(r->pc_version, sh->nn) || !ALLOC(r->pc_now, sh->nn) ||
        !ALLOC(r->pc_last, sh->nn) || !ALLOC(r->re_version, sh->nn) || !ALLOC(r->re_n, sh->nn))
        return -1;
    for (int i = 0; i < sh->nn; i++) {
        r->pc_off[i] = total;
        total += sh->ncores[i];
        r->pc_version[i] = r->re_version[i] = -1;
    }
    return ALLOC(r->pc_free, total) && ALLOC(r->re_ends, total) ? 0 : -1;
}

static Run *run_create(Shared *sh, int fair, int dynamic) {
    Run *r = (Run *)RunType.tp_alloc(&RunType, 0);
    if (!r) return NULL;
    r->sh = sh;
    sh->refs++;
    int nt = sh->nt, nn = sh->nn, nf = sh->nf;
    Py_ssize_t keys = (Py_ssize_t)nf * nn;
    r->dynamic = dynamic;
    if (!ALLOC(r->node_of, nt) || !DUP(r->parents_left, sh->n_parents, nt) ||
        !ALLOC(r->missing, nt) || !ALLOC(r->ready, nt) || !ALLOC(r->start, nt) ||
        !ALLOC(r->end, nt) || !ALLOC(r->free_cores, nn) || !ALLOC(r->free_memory, nn) ||
        !ALLOC(r->free_gpus, nn) || !ALLOC(r->queues, nn) || !ALLOC(r->heads, nn) ||
        !ALLOC(r->running, nn) || !ALLOC(r->held_until, nn) || !ALLOC(r->held_cores, nn) ||
        !ALLOC(r->version, nn) || !ALLOC(r->present, keys) || !ALLOC(r->located, nf) ||
        !ALLOC(r->whead, keys) || !ALLOC(r->in_flight, keys) || !ALLOC(r->eager, nf) ||
        !ALLOC(r->dirty, nn) || !ALLOC(r->grp, nt) || alloc_caches(r) < 0) {
        Py_DECREF(r);
        PyErr_NoMemory();
        return NULL;
    }
    for (int t = 0; t < nt; t++) {
        r->node_of[t] = -1;
        r->start[t] = r->end[t] = -1.0;
        r->grp[t] = -1;
    }
    for (int n = 0; n < nn; n++) {
        r->free_cores[n] = sh->ncores[n];
        r->free_memory[n] = sh->nmemory[n];
        r->free_gpus[n] = sh->ngpus[n];
        r->dirty[n] = 1;
    }
    for (Py_ssize_t k = 0; k < keys; k++) r->whead[k] = r->in_flight[k] = -1;
    if (net_init(&r->net, sh, fair) < 0) { Py_DECREF(r); return NULL; }
    if (run_push_releases(r) < 0) { Py_DECREF(r); PyErr_NoMemory(); return NULL; }
    return r;
}

static PyObject *run_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *inst;
    int fair, dynamic;
    if (!PyArg_ParseTuple(args, "O!pp", &InstanceType, &inst, &fair, &dynamic)) return NULL;
    Shared *sh = instance_shared(inst);
    Run *r = run_create(sh, fair, dynamic);
    shared_release(sh);
    return (PyObject *)r;
}

/* A dynamic run holds Python callbacks that usually hold the run's Python wrapper
 * (sim.fast.CoreRun), which holds the run: a cycle only the garbage collector can free, so the
 * type takes part in it (without this, every dynamic simulation and its scheduler leaked). */
static int run_traverse(Run *r, visitproc visit, void *arg) {
    Py_VISIT(r->choose);
    Py_VISIT(r->order);
    Py_VISIT(r->chooser);
    return 0;
}

static int run_clear(Run *r) {
    Py_CLEAR(r->choose);
    Py_CLEAR(r->order);
    Py_CLEAR(r->chooser);
    return 0;
}

static void run_dealloc(Run *r) {
    PyObject_GC_UnTrack(r);
    run_free_arrays(r);
    shared_release(r->sh);
    run_clear(r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static int copy_vecs(IVec **d, IVec *s, int n) {
    if (!ALLOC(*d, n)) return -1;
    for (int i = 0; i < n; i++)
        if (ivec_copy(&(*d)[i], &s[i]) < 0) return -1;
    return 0;
}

/* A twin stopped at the decision in progress: it places the task being decided, the rest of
 * its batch and every later one (sim.fork._fork). Projection caches start empty, as a new
 * view's would. */
static PyObject *run_copy(Run *s, PyObject *noargs) {
    Run *d = (Run *)RunType.tp_alloc(&RunType, 0);
    if (!d) return NULL;
    const Shared *sh = d->sh = s->sh;
    s->sh->refs++;
    int nt = sh->nt, nn = sh->nn, nf = sh->nf;
    Py_ssize_t keys = (Py_ssize_t)nf * nn;
    d->dynamic = s->dynamic;
    d->now = s->now;
    int ok = DUP(d->node_of, s->node_of, nt) && DUP(d->parents_left, s->parents_left, nt) &&
             DUP(d->missing, s->missing, nt) && DUP(d->ready, s->ready, nt) &&
             DUP(d->start, s->start, nt) && DUP(d->end, s->end, nt) &&
             DUP(d->free_cores, s->free_cores, nn) && DUP(d->free_memory, s->free_memory, nn) &&
             DUP(d->free_gpus, s->free_gpus, nn) && DUP(d->heads, s->heads, nn) &&
             DUP(d->version, s->version, nn) && DUP(d->present, s->present, keys) &&
             DUP(d->whead, s->whead, keys) && DUP(d->in_flight, s->in_flight, keys) &&
             DUP(d->dirty, s->dirty, nn) && DUP(d->grp, s->grp, nt) &&
             copy_vecs(&d->queues, s->queues, nn) == 0 &&
             copy_vecs(&d->running, s->running, nn) == 0 &&
             copy_vecs(&d->held_cores, s->held_cores, nn) == 0 &&
             copy_vecs(&d->located, s->located, nf) == 0 &&
             copy_vecs(&d->eager, s->eager, nf) == 0 && ALLOC(d->held_until, nn) &&
             ivec_copy(&d->wp_task, &s->wp_task) == 0 && ivec_copy(&d->wp_next, &s->wp_next) == 0 &&
             dvec_copy(&d->t_estimate, &s->t_estimate) == 0 &&
             dvec_copy(&d->t_start, &s->t_start) == 0 && dvec_copy(&d->t_end, &s->t_end) == 0 &&
             ivec_copy(&d->t_file, &s->t_file) == 0 && ivec_copy(&d->t_src, &s->t_src) == 0 &&
             ivec_copy(&d->t_dst, &s->t_dst) == 0 && TaskEv_copy(&d->theap, &s->theap) == 0 &&
             ivec_copy(&d->started, &s->started) == 0 && ivec_copy(&d->gpool, &s->gpool) == 0 &&
             alloc_caches(d) == 0 && net_copy(&d->net, &s->net) == 0;
    for (int i = 0; ok && i < nn; i++) ok = dvec_copy(&d->held_until[i], &s->held_until[i]) == 0;
    IVec rest = {s->deciding.a + s->position, s->deciding.n - s->position, 0};
    if (ok && s->deciding.n == 0) rest = s->batch;
    ok = ok && ivec_copy(&d->batch, &rest) == 0;
    if (!ok) {
        Py_DECREF(d);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    return (PyObject *)d;
}

static PyObject *run_set_callbacks(Run *r, PyObject *args) {
    PyObject *choose, *order;
    if (!PyArg_ParseTuple(args, "OO", &choose, &order)) return NULL;
    Py_XINCREF(choose); Py_XSETREF(r->choose, choose);
    Py_XINCREF(order); Py_XSETREF(r->order, order);
    Py_RETURN_NONE;
}

static PyObject *run_set_chooser(Run *r, PyObject *args) {
    PyObject *chooser;
    int task, node;
    if (!PyArg_ParseTuple(args, "O!ii", &ChooserType, &chooser, &task, &node)) return NULL;
    if (task < -1 || task >= r->sh->nt || node < -1 || node >= r->sh->nn) {
        PyErr_SetString(PyExc_IndexError, "pinned task or node");
        return NULL;
    }
    Py_INCREF(chooser);
    Py_XSETREF(r->chooser, chooser);
    r->pinned_task = task;
    r->pinned_node = node;
    Py_RETURN_NONE;
}

static PyObject *run_hold_m(Run *r, PyObject *args) {
    int node;
    long long cores;
    double until;
    if (!PyArg_ParseTuple(args, "iLd", &node, &cores, &until)) return NULL;
    run_hold(r, node, cores, until);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyObject *run_load_plan(Run *r, PyObject *args) {
    PyObject *node_of, *queues;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &node_of, &PyList_Type, &queues)) return NULL;
    for (int t = 0; t < r->sh->nt; t++) r->node_of[t] = (int)PyLong_AsLong(PyList_GET_ITEM(node_of, t));
    for (int n = 0; n < r->sh->nn; n++) {
        PyObject *q = PyList_GET_ITEM(queues, n);
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(q); i++)
            if (ivec_push(&r->queues[n], (int)PyLong_AsLong(PyList_GET_ITEM(q, i))) < 0) return NULL;
    }
    if (PyErr_Occurred() || run_list_copies(r) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *run_run(Run *r, PyObject *noargs) {
    if (r->dynamic) {
        for (int t = 0; t < r->sh->nt; t++)
            if (r->parents_left[t] == 0 && ivec_push(&r->batch, t) < 0) return NULL;
    } else if (run_start_static(r) < 0) {
        return NULL;
    }
    if (run_resume(r) < 0) return NULL;
    return PyLong_FromSsize_t(r->started.n);
}

static PyObject *run_resume_m(Run *r, PyObject *noargs) {
    if (run_resume(r) < 0) return NULL;
    return PyLong_FromSsize_t(r->started.n);
}

static PyObject *run_tasks(Run *r, PyObject *noargs) {
    int nt = r->sh->nt;
    return Py_BuildValue("(NNNNN)", ints_list(r->started.a, r->started.n),
                         ints_list(r->node_of, nt), doubles_list(r->ready, nt),
                         doubles_list(r->start, nt), doubles_list(r->end, nt));
}

static PyObject *run_transfers(Run *r, PyObject *noargs) {
    Py_ssize_t n = r->t_file.n;
    return Py_BuildValue("(NNNNN)", ints_list(r->t_file.a, n), ints_list(r->t_src.a, n),
                         ints_list(r->t_dst.a, n), doubles_list(r->t_start.a, n),
                         doubles_list(r->t_end.a, n));
}

static double makespan_of(Run *r) {
    double m = 0.0;
    for (int t = 0; t < r->sh->nt; t++) if (r->end[t] > m) m = r->end[t];
    for (Py_ssize_t i = 0; i < r->t_end.n; i++) if (r->t_end.a[i] > m) m = r->t_end.a[i];
    return m;
}

static PyObject *run_makespan(Run *r, PyObject *noargs) {
    return PyFloat_FromDouble(makespan_of(r));
}

/* Makespan of this finished dynamic run's realised plan replayed statically (each node's
 * tasks in start order) from other jobs' holds [(node, cores, until)]:
 * sim.fork.Rollout.replayed_makespan without leaving C. */
static PyObject *run_replayed_makespan(Run *r, PyObject *holds) {
    if (!PyList_Check(holds)) {
        PyErr_SetString(PyExc_TypeError, "replayed_makespan takes a list of holds");
        return NULL;
    }
    Run *s = run_create(r->sh, r->net.fair, 0);
    if (!s) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(holds); i++) {
        int node;
        long long cores;
        double until;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(holds, i), "iLd", &node, &cores, &until) ||
            node < 0 || node >= r->sh->nn) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "hold on an unknown node");
            Py_DECREF(s);
            return NULL;
        }
        run_hold(s, node, cores, until);
    }
    memcpy(s->node_of, r->node_of, sizeof(int) * r->sh->nt);
    for (Py_ssize_t i = 0; i < r->started.n; i++) {
        int t = r->started.a[i];
        if (ivec_push(&s->queues[r->node_of[t]], t) < 0) { Py_DECREF(s); return NULL; }
    }
    if (run_list_copies(s) < 0 || run_start_static(s) < 0 || run_resume(s) < 0) {
        Py_DECREF(s);
        return NULL;
    }
    double m = makespan_of(s);
    Py_DECREF(s);
    return PyFloat_FromDouble(m);
}

static PyObject *run_now(Run *r, void *closure) { return PyFloat_FromDouble(r->now); }
static PyObject *run_n_started(Run *r, void *closure) { return PyLong_FromSsize_t(r->started.n); }

static PyMethodDef run_methods[] = {
    {"set_callbacks", (PyCFunction)run_set_callbacks, METH_VARARGS,
     "set_callbacks(choose, order): dynamic mode's scheduler calls (task -> node index; "
     "list of ready tasks -> the same tasks in placement order)."},
    {"set_chooser", (PyCFunction)run_set_chooser, METH_VARARGS,
     "set_chooser(chooser, task, node): decide in C (chooser.c), task pinned to node."},
    {"hold", (PyCFunction)run_hold_m, METH_VARARGS, "hold(node, cores, until): another job's cores."},
    {"load_plan", (PyCFunction)run_load_plan, METH_VARARGS,
     "load_plan(node_of, queues): a static plan in index form (trusted)."},
    {"run", (PyCFunction)run_run, METH_NOARGS, "Run to the end; returns the tasks started."},
    {"resume", (PyCFunction)run_resume_m, METH_NOARGS, "Continue a fork to the end."},
    {"copy", (PyCFunction)run_copy, METH_NOARGS, "A twin at the decision in progress."},
    {"tasks", (PyCFunction)run_tasks, METH_NOARGS, "(started, node_of, ready, start, end)."},
    {"transfers", (PyCFunction)run_transfers, METH_NOARGS, "(file, source, dest, start, end)."},
    {"task_records", (PyCFunction)run_task_records, METH_VARARGS,
     "(TaskRecord, task ids, node names) -> records in start order."},
    {"transfer_records", (PyCFunction)run_transfer_records, METH_VARARGS,
     "(TransferRecord, file ids, file sizes, node names, shared FS name) -> records."},
    {"makespan", (PyCFunction)run_makespan, METH_NOARGS, "Largest task or transfer end, >= 0."},
    {"replayed_makespan", (PyCFunction)run_replayed_makespan, METH_O,
     "holds -> makespan of the realised plan replayed statically from those holds."},
    {"estimate_finish_all", (PyCFunction)run_estimate_finish_all, METH_O, "Per node."},
    {"estimate_finish", (PyCFunction)run_estimate_finish, METH_VARARGS, "(task, node)."},
    {"projection", (PyCFunction)run_projection, METH_O, "node -> (core free times, last start)."},
    {"available_times", (PyCFunction)run_available_times, METH_NOARGS, "Per node."},
    {"free_cores", (PyCFunction)run_free_cores, METH_NOARGS, "Per node."},
    {"located", (PyCFunction)run_located, METH_O, "file -> nodes holding it (arrival order)."},
    {"node_of", (PyCFunction)run_node_of, METH_O, "task -> node index, -1 unplaced."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef run_getset[] = {
    {"now", (getter)run_now, NULL, "Current simulated time.", NULL},
    {"n_started", (getter)run_n_started, NULL, "Tasks started so far.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject RunType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sim._core.Run",
    .tp_basicsize = sizeof(Run),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Run(instance, fair, dynamic): one simulation (see sim/fast.py).",
    .tp_traverse = (traverseproc)run_traverse,
    .tp_clear = (inquiry)run_clear,
    .tp_free = PyObject_GC_Del,
    .tp_new = run_new,
    .tp_dealloc = (destructor)run_dealloc,
    .tp_methods = run_methods,
    .tp_getset = run_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_core",
    "Compiled core of the simulator (sim/csrc); sim/fast.py wraps it.", -1, NULL,
};

PyMODINIT_FUNC PyInit__core(void) {
    if (PyType_Ready(&InstanceType) < 0 || PyType_Ready(&RunType) < 0 ||
        PyType_Ready(&ChooserType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&InstanceType);
    Py_INCREF(&RunType);
    Py_INCREF(&ChooserType);
    if (PyModule_AddObject(m, "Instance", (PyObject *)&InstanceType) < 0 ||
        PyModule_AddObject(m, "Run", (PyObject *)&RunType) < 0 ||
        PyModule_AddObject(m, "Chooser", (PyObject *)&ChooserType) < 0 ||
        PyModule_AddStringConstant(m, "SOURCE_HASH", CORE_SOURCE_HASH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
