/* sim._core.Instance: a compiled workflow and platform (sim.compiled) as flat C arrays, built
 * once per pair and shared by every run on it and by their forks. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

typedef struct { PyObject_HEAD Shared *sh; } Instance;

static void shared_free(Shared *s) {
    free(s->work); free(s->cores); free(s->memory); free(s->gpus); free(s->n_parents);
    free(s->ch_off); free(s->ch); free(s->in_off); free(s->in); free(s->out_off); free(s->out);
    free(s->fsize); free(s->producer); free(s->speed); free(s->ncores); free(s->nmemory);
    free(s->ngpus); free(s->bw); free(s->link); free(s->prefers); free(s->gspeed);
    free(s->rel_t); free(s->rel_off); free(s->rel_task); free(s->relf_off); free(s->relf);
    free(s->late); free(s);
}

void shared_release(Shared *s) {
    if (s && --s->refs == 0) shared_free(s);
}

static int doubles(PyObject *seq, int n, double **out) {
    *out = malloc(sizeof(double) * (n ? n : 1));
    if (!*out) { PyErr_NoMemory(); return -1; }
    for (int i = 0; i < n; i++) {
        (*out)[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(seq, i));
        if ((*out)[i] == -1.0 && PyErr_Occurred()) return -1;
    }
    return 0;
}

static int longs(PyObject *seq, int n, long long **out) {
    *out = malloc(sizeof(long long) * (n ? n : 1));
    if (!*out) { PyErr_NoMemory(); return -1; }
    for (int i = 0; i < n; i++) {
        (*out)[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, i));
        if ((*out)[i] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

static int ints(PyObject *seq, int n, int **out) {
    long long *tmp;
    if (longs(seq, n, &tmp) < 0) { free(tmp); return -1; }
    *out = malloc(sizeof(int) * (n ? n : 1));
    if (!*out) { free(tmp); PyErr_NoMemory(); return -1; }
    for (int i = 0; i < n; i++) (*out)[i] = (int)tmp[i];
    free(tmp);
    return 0;
}

/* A tuple of tuples of ints as CSR (offsets n + 1, then the flat values). */
static int csr(PyObject *seq, int n, int **off, int **val) {
    *off = malloc(sizeof(int) * (n + 1));
    if (!*off) { PyErr_NoMemory(); return -1; }
    int total = 0;
    for (int i = 0; i < n; i++) total += (int)PyTuple_GET_SIZE(PyTuple_GET_ITEM(seq, i));
    *val = malloc(sizeof(int) * (total ? total : 1));
    if (!*val) { PyErr_NoMemory(); return -1; }
    int k = 0;
    for (int i = 0; i < n; i++) {
        (*off)[i] = k;
        PyObject *row = PyTuple_GET_ITEM(seq, i);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(row); j++)
            (*val)[k++] = (int)PyLong_AsLong(PyTuple_GET_ITEM(row, j));
    }
    (*off)[n] = k;
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *instance_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *work, *cores, *memory, *gpus, *parents, *children, *inputs, *outputs, *fsize,
        *producer, *speed, *ncores, *nmemory, *ngpus, *bw, *link, *prefers, *gspeed, *rel_t,
        *rel_tasks, *rel_files;
    double latency, fs_bw;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!O!O!O!O!O!O!O!O!ddO!O!O!O!O!O!", &PyTuple_Type, &work,
                          &PyTuple_Type, &cores, &PyTuple_Type, &memory, &PyTuple_Type, &gpus,
                          &PyTuple_Type, &parents, &PyTuple_Type, &children, &PyTuple_Type,
                          &inputs, &PyTuple_Type, &outputs, &PyTuple_Type, &fsize, &PyTuple_Type,
                          &producer, &PyTuple_Type, &speed, &PyTuple_Type, &ncores, &PyTuple_Type,
                          &nmemory, &PyTuple_Type, &ngpus, &PyTuple_Type, &bw, &latency, &fs_bw,
                          &PyTuple_Type, &link, &PyTuple_Type, &prefers, &PyTuple_Type, &gspeed,
                          &PyTuple_Type, &rel_t, &PyTuple_Type, &rel_tasks, &PyTuple_Type,
                          &rel_files))
        return NULL;
    Shared *s = calloc(1, sizeof(Shared));
    if (!s) return PyErr_NoMemory();
    s->refs = 1;
    s->nt = (int)PyTuple_GET_SIZE(work);
    s->nn = (int)PyTuple_GET_SIZE(speed);
    s->nf = (int)PyTuple_GET_SIZE(fsize);
    s->latency = latency;
    s->fs_bw = fs_bw;
    int *poff = NULL, *pval = NULL;
    if (doubles(work, s->nt, &s->work) < 0 || ints(cores, s->nt, &s->cores) < 0 ||
        longs(memory, s->nt, &s->memory) < 0 || ints(gpus, s->nt, &s->gpus) < 0 ||
        csr(parents, s->nt, &poff, &pval) < 0 || csr(children, s->nt, &s->ch_off, &s->ch) < 0 ||
        csr(inputs, s->nt, &s->in_off, &s->in) < 0 ||
        csr(outputs, s->nt, &s->out_off, &s->out) < 0 || doubles(fsize, s->nf, &s->fsize) < 0 ||
        ints(producer, s->nf, &s->producer) < 0 || doubles(speed, s->nn, &s->speed) < 0 ||
        ints(ncores, s->nn, &s->ncores) < 0 || longs(nmemory, s->nn, &s->nmemory) < 0 ||
        ints(ngpus, s->nn, &s->ngpus) < 0 || doubles(bw, s->nn, &s->bw) < 0 ||
        ints(prefers, s->nt, &s->prefers) < 0 || doubles(gspeed, s->nn, &s->gspeed) < 0)
        goto fail;
    s->nrel = (int)PyTuple_GET_SIZE(rel_t);
    if (doubles(rel_t, s->nrel, &s->rel_t) < 0 ||
        csr(rel_tasks, s->nrel, &s->rel_off, &s->rel_task) < 0 ||
        csr(rel_files, s->nrel, &s->relf_off, &s->relf) < 0)
        goto fail;
    s->late = calloc((size_t)(s->nf ? s->nf : 1), 1);
    if (!s->late) { PyErr_NoMemory(); goto fail; }
    for (int i = 0; i < s->relf_off[s->nrel]; i++) s->late[s->relf[i]] = 1;
    s->n_parents = malloc(sizeof(int) * (s->nt ? s->nt : 1));
    s->link = malloc(sizeof(double) * (size_t)(s->nn + 1) * (s->nn ? s->nn : 1));
    if (!s->n_parents || !s->link) { PyErr_NoMemory(); goto fail; }
    for (int t = 0; t < s->nt; t++) s->n_parents[t] = poff[t + 1] - poff[t];
    for (int i = 0; i < s->rel_off[s->nrel]; i++) s->n_parents[s->rel_task[i]]++; /* the release */
    if (PyTuple_GET_SIZE(link) != s->nn + 1) {
        PyErr_SetString(PyExc_ValueError, "link bandwidth needs one row per node and the FS's");
        goto fail;
    }
    for (int i = 0; i <= s->nn; i++) {
        PyObject *row = PyTuple_GET_ITEM(link, i);
        for (int j = 0; j < s->nn; j++) {
            s->link[(Py_ssize_t)i * s->nn + j] = PyFloat_AsDouble(PyTuple_GET_ITEM(row, j));
        }
    }
    if (PyErr_Occurred()) goto fail;
    free(poff); free(pval);
    Instance *self = (Instance *)type->tp_alloc(type, 0);
    if (!self) goto fail;
    self->sh = s;
    return (PyObject *)self;
fail:
    free(poff); free(pval);
    shared_free(s);
    return NULL;
}

static void instance_dealloc(Instance *self) {
    shared_release(self->sh);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

Shared *instance_shared(PyObject *obj) {
    Instance *self = (Instance *)obj;
    self->sh->refs++;
    return self->sh;
}

PyTypeObject InstanceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sim._core.Instance",
    .tp_basicsize = sizeof(Instance),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled workflow and platform as flat arrays (see sim/fast.py).",
    .tp_new = instance_new,
    .tp_dealloc = (destructor)instance_dealloc,
};
