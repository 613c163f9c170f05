/* What a scheduler's view asks the core (sim.fast.CoreView): estimates, projections, free
 * cores, file locations; and the lists the module's methods return. */
#include "core.h"

PyObject *doubles_list(const double *a, Py_ssize_t n) {
    PyObject *l = PyList_New(n);
    for (Py_ssize_t i = 0; l && i < n; i++) PyList_SET_ITEM(l, i, PyFloat_FromDouble(a[i]));
    return l;
}

PyObject *ints_list(const int *a, Py_ssize_t n) {
    PyObject *l = PyList_New(n);
    for (Py_ssize_t i = 0; l && i < n; i++) PyList_SET_ITEM(l, i, PyLong_FromLong(a[i]));
    return l;
}

static int task_arg(Run *r, PyObject *arg, int *task) {
    long t = PyLong_AsLong(arg);
    if (t == -1 && PyErr_Occurred()) return -1;
    if (t < 0 || t >= r->sh->nt) { PyErr_SetString(PyExc_IndexError, "task index"); return -1; }
    *task = (int)t;
    return 0;
}

PyObject *run_estimate_finish_all(Run *r, PyObject *arg) {
    int task;
    if (task_arg(r, arg, &task) < 0) return NULL;
    PyObject *l = PyList_New(r->sh->nn);
    for (int n = 0; l && n < r->sh->nn; n++) {
        double f;
        if (estimate_finish(r, task, n, &f) < 0) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, n, PyFloat_FromDouble(f));
    }
    return l;
}

PyObject *run_estimate_finish(Run *r, PyObject *args) {
    int task, node;
    double f;
    if (!PyArg_ParseTuple(args, "ii", &task, &node)) return NULL;
    if (estimate_finish(r, task, node, &f) < 0) return NULL;
    return PyFloat_FromDouble(f);
}

PyObject *run_projection(Run *r, PyObject *arg) {
    long node = PyLong_AsLong(arg);
    if (node == -1 && PyErr_Occurred()) return NULL;
    double *cf, last;
    int L = projection(r, (int)node, &cf, &last);
    if (L < 0) return NULL;
    return Py_BuildValue("(Nd)", doubles_list(cf, L), last);
}

PyObject *run_available_times(Run *r, PyObject *noargs) {
    PyObject *l = PyList_New(r->sh->nn);
    for (int n = 0; l && n < r->sh->nn; n++) {
        double *cf, last;
        int L = projection(r, n, &cf, &last);
        if (L < 0) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, n, PyFloat_FromDouble(cf[L - 1] > r->now ? cf[L - 1] : r->now));
    }
    return l;
}

PyObject *run_free_cores(Run *r, PyObject *noargs) {
    PyObject *l = PyList_New(r->sh->nn);
    for (int n = 0; l && n < r->sh->nn; n++) PyList_SET_ITEM(l, n, PyLong_FromLongLong(r->free_cores[n]));
    return l;
}

PyObject *run_located(Run *r, PyObject *arg) {
    long f = PyLong_AsLong(arg);
    if (f == -1 && PyErr_Occurred()) return NULL;
    if (f < 0 || f >= r->sh->nf) { PyErr_SetString(PyExc_IndexError, "file index"); return NULL; }
    return ints_list(r->located[f].a, r->located[f].n);
}

PyObject *run_node_of(Run *r, PyObject *arg) {
    int task;
    if (task_arg(r, arg, &task) < 0) return NULL;
    return PyLong_FromLong(r->node_of[task]);
}
