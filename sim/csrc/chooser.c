/* sim._core.Chooser: a greedy scoring policy's decisions made inside the core, without a call
 * into Python per decision (the rollouts of policy-lookahead make ~40,000 of them per plan).
 *
 * It is the compiled twin of policy/learned/engine_features.py (the candidate features, the
 * same float64 operations in the same order, one cast to float32: bit-identical, tested) and
 * of the network's head (two linear layers and an earliest-finish prior, float32 in torch).
 * The head's matrix products are not reproduced bit for bit (the BLAS's summation order is its
 * own): they are computed in float64 with a rigorous bound on how far torch's float32 result
 * can be from the exact one (Higham, "Accuracy and Stability of Numerical Algorithms", eq.
 * 3.5: |fl(x.y) - x.y| <= gamma_n |x|.|y| in any summation order, FMA or not, with
 * gamma_n = n u / (1 - n u), u = 2^-24). A decision is taken here only when its winner beats
 * every other valid node by more than both bounds plus the float32 rounding of the final
 * subtraction, so torch's argmax is certainly the same node; otherwise (near-ties, NaN) the
 * core asks the Python scheduler, which runs the network itself. Policy-side constants come
 * from policy/learned/compiled_head.py. */
#include "core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NF 13        /* candidate features (policy/learned/features.py CANDIDATE_FEATURES) */
#define PRIOR_GAP 7
#define PRIOR_COST_TO_GO 8
#define CLIP 10.0f   /* RELATIVE_FINISH_CLIP */

typedef struct {
    PyObject_HEAD
    int nt, nn, h;
    unsigned char *mask;        /* nt x nn: the node can host the task */
    int *in_off, *in_file;      /* per task, its inputs' file indices (duplicates kept) */
    double *in_size;            /* ... and sizes */
    double *fs_time, *input_bytes, *input_div, *own; /* per task */
    double *bw, *ncores;        /* per node */
    double *serve, *compute;    /* nt x nn, seconds */
    float *fixed;               /* nt x nn x NF: the float32 columns no decision changes */
    double *base, *base_abs;    /* nt x h: b1 + W1[task part] . task embedding; |.| version */
    double *node, *node_abs;    /* nn x h: W1[node part] . node embedding; |.| version */
    double *w1f, *w1f_abs;      /* NF x h: W1's feature columns, transposed */
    double *w2, *w2_abs, b2;    /* h */
    float eft_prior, lookahead_weight;
    int *rank;                  /* nt: position in the scheduler's placement order */
    double scale;
    double *work;               /* scratch: 6 x nn doubles */
    float *feats;               /* scratch: nn x NF */
    double *z, *s;              /* scratch: h each */
} Chooser;

static void chooser_dealloc(Chooser *c) {
    free(c->mask); free(c->in_off); free(c->in_file); free(c->in_size); free(c->fs_time);
    free(c->input_bytes); free(c->input_div); free(c->own); free(c->bw); free(c->ncores);
    free(c->serve); free(c->compute); free(c->fixed); free(c->base); free(c->base_abs);
    free(c->node); free(c->node_abs); free(c->w1f); free(c->w1f_abs); free(c->w2);
    free(c->w2_abs); free(c->rank); free(c->work); free(c->feats); free(c->z); free(c->s);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* A copy of a bytes object holding exactly n items of size bytes each. */
static void *take(PyObject *b, Py_ssize_t n, size_t size, const char *what) {
    if (!PyBytes_Check(b) || PyBytes_GET_SIZE(b) != n * (Py_ssize_t)size) {
        PyErr_Format(PyExc_ValueError, "Chooser: %s needs %zd items of %zu bytes", what, n, size);
        return NULL;
    }
    void *p = malloc((size_t)(n ? n : 1) * size);
    if (!p) return PyErr_NoMemory();
    memcpy(p, PyBytes_AS_STRING(b), (size_t)n * size);
    return p;
}

static PyObject *chooser_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    int nt, nn, h;
    PyObject *mask, *in_off, *in_file, *in_size, *fs_time, *input_bytes, *input_div, *own, *bw,
        *ncores, *serve, *compute, *fixed, *base, *base_abs, *node, *node_abs, *w1f, *w2, *rank;
    double b2, eft, lw, scale;
    if (!PyArg_ParseTuple(args, "iiiOOOOOOOOOOOOOOOOOOOdddOd", &nt, &nn, &h, &mask, &in_off,
                          &in_file, &in_size, &fs_time, &input_bytes, &input_div, &own, &bw,
                          &ncores, &serve, &compute, &fixed, &base, &base_abs, &node, &node_abs,
                          &w1f, &w2, &b2, &eft, &lw, &rank, &scale))
        return NULL;
    if (nt < 1 || nn < 1 || h < 1 || !PyBytes_Check(in_off) ||
        PyBytes_GET_SIZE(in_off) != (Py_ssize_t)sizeof(int) * (nt + 1)) {
        PyErr_SetString(PyExc_ValueError, "Chooser: bad sizes");
        return NULL;
    }
    Chooser *c = (Chooser *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    c->nt = nt; c->nn = nn; c->h = h;
    Py_ssize_t tn = (Py_ssize_t)nt * nn, ni;
    int ok = (c->in_off = take(in_off, nt + 1, sizeof(int), "in_off")) != NULL;
    ni = ok ? c->in_off[nt] : 0;
    ok = ok && (c->mask = take(mask, tn, 1, "mask")) && (c->in_file = take(in_file, ni, sizeof(int), "in_file")) &&
         (c->in_size = take(in_size, ni, sizeof(double), "in_size")) &&
         (c->fs_time = take(fs_time, nt, sizeof(double), "fs_time")) &&
         (c->input_bytes = take(input_bytes, nt, sizeof(double), "input_bytes")) &&
         (c->input_div = take(input_div, nt, sizeof(double), "input_div")) &&
         (c->own = take(own, nt, sizeof(double), "own")) &&
         (c->bw = take(bw, nn, sizeof(double), "bw")) &&
         (c->ncores = take(ncores, nn, sizeof(double), "ncores")) &&
         (c->serve = take(serve, tn, sizeof(double), "serve")) &&
         (c->compute = take(compute, tn, sizeof(double), "compute")) &&
         (c->fixed = take(fixed, tn * NF, sizeof(float), "fixed")) &&
         (c->base = take(base, (Py_ssize_t)nt * h, sizeof(double), "base")) &&
         (c->base_abs = take(base_abs, (Py_ssize_t)nt * h, sizeof(double), "base_abs")) &&
         (c->node = take(node, (Py_ssize_t)nn * h, sizeof(double), "node")) &&
         (c->node_abs = take(node_abs, (Py_ssize_t)nn * h, sizeof(double), "node_abs")) &&
         (c->w1f = take(w1f, (Py_ssize_t)h * NF, sizeof(double), "w1f")) &&
         (c->w2 = take(w2, h, sizeof(double), "w2")) &&
         (c->rank = take(rank, nt, sizeof(int), "rank")) &&
         (c->w1f_abs = malloc(sizeof(double) * (size_t)h * NF)) &&
         (c->w2_abs = malloc(sizeof(double) * (size_t)h)) &&
         (c->work = malloc(sizeof(double) * 6 * (size_t)nn)) &&
         (c->feats = malloc(sizeof(float) * NF * (size_t)nn)) &&
         (c->z = malloc(sizeof(double) * (size_t)h)) && (c->s = malloc(sizeof(double) * (size_t)h));
    if (!ok) {
        Py_DECREF(c);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < (Py_ssize_t)h * NF; i++) c->w1f_abs[i] = fabs(c->w1f[i]);
    for (int j = 0; j < h; j++) c->w2_abs[j] = fabs(c->w2[j]);
    c->b2 = b2;
    c->eft_prior = (float)eft;
    c->lookahead_weight = (float)lw;
    c->scale = scale;
    return (PyObject *)c;
}

static inline float clip(float v) { return v > CLIP ? CLIP : v; }

/* The candidate features of task on every node at the run's current decision, into c->feats
 * (policy.learned.engine_features.engine_candidate_features, operation for operation). */
static int features(Chooser *c, Run *r, int task) {
    int nn = c->nn;
    const unsigned char *mask = c->mask + (Py_ssize_t)task * nn;
    double *local = c->work, *finish = local + nn, *inbound = finish + nn, *aware = inbound + nn;
    double *avail = aware + nn;
    const double *serve = c->serve + (Py_ssize_t)task * nn;
    const double *compute = c->compute + (Py_ssize_t)task * nn;
    double now = r->now, scale = c->scale, own = c->own[task], fs_time = c->fs_time[task];
    for (int n = 0; n < nn; n++) local[n] = 0.0;
    for (int i = c->in_off[task]; i < c->in_off[task + 1]; i++) {
        const IVec *where = &r->located[c->in_file[i]];
        for (Py_ssize_t k = 0; k < where->n; k++) local[where->a[k]] += c->in_size[i];
    }
    double fmin = INFINITY, amin = INFINITY;
    for (int n = 0; n < nn; n++) {
        double *cf, last;
        int L = projection(r, n, &cf, &last);
        if (L < 0 || estimate_finish(r, task, n, &finish[n]) < 0) return -1;
        avail[n] = cf[L - 1] > now ? cf[L - 1] : now;
        double pull = (c->input_bytes[task] - local[n]) / c->bw[n];
        inbound[n] = pull >= fs_time ? pull : fs_time;
        double data = now + inbound[n] + compute[n];
        aware[n] = (finish[n] >= data ? finish[n] : data) + serve[n];
        if (mask[n] && finish[n] < fmin) fmin = finish[n];
        if (mask[n] && aware[n] < amin) amin = aware[n];
    }
    const float *fixed = c->fixed + (Py_ssize_t)task * nn * NF;
    memcpy(c->feats, fixed, sizeof(float) * NF * (size_t)nn);
    for (int n = 0; n < nn; n++) {
        if (!mask[n]) continue; /* unfit rows: zeros and the task's upward rank, all fixed */
        float *f = c->feats + (Py_ssize_t)n * NF;
        double idle = avail[n] - now;
        f[0] = clip((float)((finish[n] - now) / scale));
        f[1] = clip((float)((finish[n] - fmin) / scale));
        f[2] = clip((float)((idle >= 0.0 ? idle : 0.0) / scale));
        f[3] = clip((float)(local[n] / c->input_div[task]));
        f[5] = clip((float)((double)r->free_cores[n] / c->ncores[n]));
        f[PRIOR_GAP] = clip((float)((aware[n] - amin) / own));
        f[9] = clip((float)(inbound[n] / scale));
    }
    return 0;
}

/* The greedy node for task, or -1 when torch's float32 argmax is not certainly the float64
 * winner (the caller then asks the Python scheduler); -2 with an exception set on failure. */
int chooser_choose(PyObject *obj, Run *r, int task) {
    Chooser *c = (Chooser *)obj;
    if (features(c, r, task) < 0) return -2;
    const int nn = c->nn, h = c->h;
    const double u = 0x1p-24, g1 = (NF + 2 * h + 1) * u / (1 - (NF + 2 * h + 1) * u);
    const double g2 = (h + 1) * u / (1 - (h + 1) * u);
    const unsigned char *mask = c->mask + (Py_ssize_t)task * nn;
    double *logit = c->work, *bound = logit + nn; /* the features' scratch is free again */
    int best = -1;
    for (int n = 0; n < nn; n++) {
        if (!mask[n]) continue;
        const float *f = c->feats + (Py_ssize_t)n * NF;
        const double *base = c->base + (Py_ssize_t)task * h, *node = c->node + (Py_ssize_t)n * h;
        const double *base_abs = c->base_abs + (Py_ssize_t)task * h;
        const double *node_abs = c->node_abs + (Py_ssize_t)n * h;
        double *z = c->z, *s = c->s;
        for (int j = 0; j < h; j++) {
            z[j] = base[j] + node[j];
            s[j] = base_abs[j] + node_abs[j];
        }
        for (int k = 0; k < NF; k++) { /* over the hidden units innermost: vectorised */
            const double *w = c->w1f + (Py_ssize_t)k * h, *wa = c->w1f_abs + (Py_ssize_t)k * h;
            double fk = f[k], ak = fabs(fk);
            for (int j = 0; j < h; j++) {
                z[j] += w[j] * fk;
                s[j] += wa[j] * ak;
            }
        }
        double raw = c->b2, spread = 0.0, carried = fabs(c->b2);
        for (int j = 0; j < h; j++) {
            double hid = z[j] > 0.0 ? z[j] : 0.0, e1 = g1 * s[j];
            raw += c->w2[j] * hid;
            spread += c->w2_abs[j] * e1;                /* hidden errors carried through w2 */
            carried += c->w2_abs[j] * (hid + e1);       /* |w2| . |hidden| for layer 2's own */
        }
        float prior = c->eft_prior * (f[PRIOR_GAP] + c->lookahead_weight * f[PRIOR_COST_TO_GO]);
        logit[n] = raw - (double)prior;
        /* 1.001: room for this float64 arithmetic's own rounding, ~2^-29 of the bound */
        bound[n] = 1.001 * (spread + g2 * carried);
        if (isnan(logit[n]) || isnan(bound[n])) return -1;
        if (best < 0 || logit[n] > logit[best]) best = n;
    }
    if (best < 0 || !(logit[best] - bound[best] > -1e38)) return -1; /* above the mask's value */
    for (int n = 0; n < nn; n++) {
        if (!mask[n] || n == best) continue;
        double a = fabs(logit[best]) + bound[best], b = fabs(logit[n]) + bound[n];
        double need = bound[best] + bound[n] + u * (a + b) + 0x1p-40 * (a + b);
        if (!(logit[best] - logit[n] > need)) return -1;
    }
    return best;
}

/* For placement: a batch of ready tasks in the scheduler's order (ascending rank). */
void chooser_order(PyObject *obj, int *tasks, Py_ssize_t n) {
    const int *rank = ((Chooser *)obj)->rank;
    for (Py_ssize_t i = 1; i < n; i++) {
        int t = tasks[i];
        Py_ssize_t j = i;
        for (; j > 0 && rank[tasks[j - 1]] > rank[t]; j--) tasks[j] = tasks[j - 1];
        tasks[j] = t;
    }
}

static int run_and_task(Chooser *c, PyObject *args, Run **r, int *task) {
    PyObject *run;
    if (!PyArg_ParseTuple(args, "O!i", &RunType, &run, task)) return -1;
    *r = (Run *)run;
    if ((*r)->sh->nt != c->nt || (*r)->sh->nn != c->nn || *task < 0 || *task >= c->nt) {
        PyErr_SetString(PyExc_ValueError, "Chooser: run or task of another instance");
        return -1;
    }
    return 0;
}

static PyObject *chooser_features_m(Chooser *c, PyObject *args) {
    Run *r;
    int task;
    if (run_and_task(c, args, &r, &task) < 0 || features(c, r, task) < 0) return NULL;
    return PyBytes_FromStringAndSize((const char *)c->feats, sizeof(float) * NF * (Py_ssize_t)c->nn);
}

static PyObject *chooser_choose_m(Chooser *c, PyObject *args) {
    Run *r;
    int task;
    if (run_and_task(c, args, &r, &task) < 0) return NULL;
    int node = chooser_choose((PyObject *)c, r, task);
    return node == -2 ? NULL : PyLong_FromLong(node);
}

static PyMethodDef chooser_methods[] = {
    {"features", (PyCFunction)chooser_features_m, METH_VARARGS,
     "features(run, task) -> float32 bytes (nodes x 13): the candidate features now."},
    {"choose", (PyCFunction)chooser_choose_m, METH_VARARGS,
     "choose(run, task) -> the greedy node, or -1 when only the network itself can tell."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ChooserType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sim._core.Chooser",
    .tp_basicsize = sizeof(Chooser),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A greedy scoring policy's decisions in the core (policy/learned/compiled_head.py).",
    .tp_new = chooser_new,
    .tp_dealloc = (destructor)chooser_dealloc,
    .tp_methods = chooser_methods,
};
