/* Growable arrays and binary heaps for the compiled core (sim/csrc/core.h). Every heap key is
 * a total order (ties broken by a unique sequence number or index, as in the Python tuples),
 * so the pop order, and with it every result, does not depend on the heap's internals. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

static int grow(void **a, Py_ssize_t *cap, Py_ssize_t need, size_t size) {
    if (need <= *cap) return 0;
    Py_ssize_t c = *cap ? *cap : 8;
    while (c < need) c *= 2;
    void *p = realloc(*a, (size_t)c * size);
    if (!p) { PyErr_NoMemory(); return -1; }
    *a = p;
    *cap = c;
    return 0;
}

int ivec_push(IVec *v, int x) {
    if (grow((void **)&v->a, &v->cap, v->n + 1, sizeof(int)) < 0) return -1;
    v->a[v->n++] = x;
    return 0;
}

int dvec_push(DVec *v, double x) {
    if (grow((void **)&v->a, &v->cap, v->n + 1, sizeof(double)) < 0) return -1;
    v->a[v->n++] = x;
    return 0;
}

int ivec_copy(IVec *d, const IVec *s) {
    d->a = NULL; d->n = 0; d->cap = 0;
    if (grow((void **)&d->a, &d->cap, s->n ? s->n : 1, sizeof(int)) < 0) return -1;
    if (s->n) memcpy(d->a, s->a, (size_t)s->n * sizeof(int));
    d->n = s->n;
    return 0;
}

int dvec_copy(DVec *d, const DVec *s) {
    d->a = NULL; d->n = 0; d->cap = 0;
    if (grow((void **)&d->a, &d->cap, s->n ? s->n : 1, sizeof(double)) < 0) return -1;
    if (s->n) memcpy(d->a, s->a, (size_t)s->n * sizeof(double));
    d->n = s->n;
    return 0;
}

static inline int TaskEv_lt(const TaskEv *x, const TaskEv *y) {
    if (x->t != y->t) return x->t < y->t;
    if (x->seq != y->seq) return x->seq < y->seq;
    return x->task < y->task;
}
static inline int NetEv_lt(const NetEv *x, const NetEv *y) {
    if (x->t != y->t) return x->t < y->t;
    return x->seq < y->seq;
}
static inline int Target_lt(const Target *x, const Target *y) {
    if (x->target != y->target) return x->target < y->target;
    return x->transfer < y->transfer;
}
static inline int Share_lt(const Share *x, const Share *y) {
    if (x->share != y->share) return x->share < y->share;
    return x->r < y->r;
}

#define HEAP_IMPL(T)                                                                     \
    int T##_push(T##Heap *h, T x) {                                                      \
        if (grow((void **)&h->a, &h->cap, h->n + 1, sizeof(T)) < 0) return -1;           \
        Py_ssize_t i = h->n++;                                                           \
        while (i > 0) {                                                                  \
            Py_ssize_t p = (i - 1) / 2;                                                  \
            if (!T##_lt(&x, &h->a[p])) break;                                            \
            h->a[i] = h->a[p];                                                           \
            i = p;                                                                       \
        }                                                                                \
        h->a[i] = x;                                                                     \
        return 0;                                                                        \
    }                                                                                    \
    T T##_pop(T##Heap *h) {                                                              \
        T top = h->a[0], last = h->a[--h->n];                                            \
        Py_ssize_t i = 0, n = h->n;                                                      \
        for (;;) {                                                                       \
            Py_ssize_t c = 2 * i + 1;                                                    \
            if (c >= n) break;                                                           \
            if (c + 1 < n && T##_lt(&h->a[c + 1], &h->a[c])) c++;                        \
            if (!T##_lt(&h->a[c], &last)) break;                                         \
            h->a[i] = h->a[c];                                                           \
            i = c;                                                                       \
        }                                                                                \
        if (n) h->a[i] = last;                                                           \
        return top;                                                                      \
    }                                                                                    \
    int T##_copy(T##Heap *d, const T##Heap *s) {                                         \
        d->a = NULL; d->n = 0; d->cap = 0;                                               \
        if (grow((void **)&d->a, &d->cap, s->n ? s->n : 1, sizeof(T)) < 0) return -1;   \
        if (s->n) memcpy(d->a, s->a, (size_t)s->n * sizeof(T));                          \
        d->n = s->n;                                                                     \
        return 0;                                                                        \
    }

HEAP_IMPL(TaskEv)
HEAP_IMPL(NetEv)
HEAP_IMPL(Target)
HEAP_IMPL(Share)
