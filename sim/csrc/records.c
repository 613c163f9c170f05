/* The run's task and transfer records as instances of sim.schedule's frozen slots dataclasses,
 * built here with their slots filled directly: the dataclass __init__ (one object.__setattr__
 * per field) cost more than the whole simulation. sim/fast.py only calls this for classes
 * whose __init__ does nothing else (no __post_init__), with the fields in slot order. */
#include "core.h"

#include "structmember.h"

/* Byte offsets of the named slots of cls (member descriptors holding objects). */
static int slot_offsets(PyTypeObject *cls, const char *const *names, int n, Py_ssize_t *out) {
    for (int i = 0; i < n; i++) {
        PyObject *d = PyObject_GetAttrString((PyObject *)cls, names[i]);
        if (!d) return -1;
        int ok = Py_IS_TYPE(d, &PyMemberDescr_Type) &&
                 ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX;
        if (ok) out[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", cls->tp_name, names[i]);
            return -1;
        }
    }
    return 0;
}

static PyObject *record(PyTypeObject *cls, const Py_ssize_t *off, PyObject **values, int n) {
    PyObject *obj = cls->tp_alloc(cls, 0);
    for (int i = 0; i < n; i++) {
        if (!obj || !values[i]) {
            for (int j = i; j < n; j++) Py_XDECREF(values[j]);
            Py_XDECREF(obj);
            return NULL;
        }
        *(PyObject **)((char *)obj + off[i]) = values[i]; /* steals the reference */
    }
    return obj;
}

static PyObject *item(PyObject *tuple, Py_ssize_t i) {
    PyObject *x = PyTuple_GET_ITEM(tuple, i);
    Py_INCREF(x);
    return x;
}

/* task_records(TaskRecord, task_ids, names): (task, node, ready, start, end) in start order. */
PyObject *run_task_records(Run *r, PyObject *args) {
    PyTypeObject *cls;
    PyObject *ids, *names;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyType_Type, &cls, &PyTuple_Type, &ids, &PyTuple_Type,
                          &names))
        return NULL;
    static const char *const fields[] = {"task", "node", "ready", "start", "end"};
    Py_ssize_t off[5];
    if (slot_offsets(cls, fields, 5, off) < 0) return NULL;
    PyObject *out = PyTuple_New(r->started.n);
    for (Py_ssize_t i = 0; out && i < r->started.n; i++) {
        int t = r->started.a[i];
        PyObject *v[5] = {item(ids, t), item(names, r->node_of[t]), PyFloat_FromDouble(r->ready[t]),
                          PyFloat_FromDouble(r->start[t]), PyFloat_FromDouble(r->end[t])};
        PyObject *rec = record(cls, off, v, 5);
        if (!rec) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, i, rec);
    }
    return out;
}

/* transfer_records(TransferRecord, file_ids, file_sizes, names, shared_fs): one per copy, in
 * start order: (file, size, source, destination, start, end). */
PyObject *run_transfer_records(Run *r, PyObject *args) {
    PyTypeObject *cls;
    PyObject *ids, *sizes, *names, *fs;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O", &PyType_Type, &cls, &PyTuple_Type, &ids,
                          &PyTuple_Type, &sizes, &PyTuple_Type, &names, &fs))
        return NULL;
    static const char *const fields[] = {"file", "size", "source", "destination", "start", "end"};
    Py_ssize_t off[6];
    if (slot_offsets(cls, fields, 6, off) < 0) return NULL;
    PyObject *out = PyTuple_New(r->t_file.n);
    for (Py_ssize_t i = 0; out && i < r->t_file.n; i++) {
        int f = r->t_file.a[i], src = r->t_src.a[i];
        PyObject *source = src == FROM_FS ? fs : PyTuple_GET_ITEM(names, src);
        Py_INCREF(source);
        PyObject *v[6] = {item(ids, f), item(sizes, f), source, item(names, r->t_dst.a[i]),
                          PyFloat_FromDouble(r->t_start.a[i]), PyFloat_FromDouble(r->t_end.a[i])};
        PyObject *rec = record(cls, off, v, 6);
        if (!rec) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, i, rec);
    }
    return out;
}
