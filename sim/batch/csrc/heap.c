/* The event heap (ordered by time, kind, subject, as Python's heapq orders the tuples), the
 * sorted pending queue (bisect.insort's order) and small growable vectors. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"

static int event_less(const Event *a, const Event *b) {
    if (a->t != b->t) return a->t < b->t;
    if (a->kind != b->kind) return a->kind < b->kind;
    return a->x < b->x;
}

int heap_push(Heap *h, int64_t t, int64_t kind, int64_t x) {
    if (h->n == h->cap) {
        int64_t cap = h->cap ? 2 * h->cap : 1024;
        Event *a = realloc(h->a, (size_t)cap * sizeof(Event));
        if (!a) return -1;
        h->a = a;
        h->cap = cap;
    }
    Event ev = {t, kind, x};
    int64_t i = h->n++;
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!event_less(&ev, &h->a[parent])) break;
        h->a[i] = h->a[parent];
        i = parent;
    }
    h->a[i] = ev;
    return 0;
}

Event heap_pop(Heap *h) {
    Event top = h->a[0];
    Event last = h->a[--h->n];
    int64_t i = 0;
    for (;;) {
        int64_t child = 2 * i + 1;
        if (child >= h->n) break;
        if (child + 1 < h->n && event_less(&h->a[child + 1], &h->a[child])) child++;
        if (!event_less(&h->a[child], &last)) break;
        h->a[i] = h->a[child];
        i = child;
    }
    if (h->n > 0) h->a[i] = last;
    return top;
}

static int key_cmp(const Key *a, const Key *b) {
    for (int k = 0; k < 4; k++) {
        if (a->k[k] != b->k[k]) return a->k[k] < b->k[k] ? -1 : 1;
    }
    return 0;
}

static int key_qsort(const void *a, const void *b) { return key_cmp(a, b); }

int queue_insert(Queue *q, Key key) {
    if (q->n == q->cap) {
        int64_t cap = q->cap ? 2 * q->cap : 256;
        Key *a = realloc(q->a, (size_t)cap * sizeof(Key));
        if (!a) return -1;
        q->a = a;
        q->cap = cap;
    }
    int64_t lo = 0, hi = q->n; /* bisect_right */
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (key_cmp(&key, &q->a[mid]) < 0) hi = mid;
        else lo = mid + 1;
    }
    memmove(&q->a[lo + 1], &q->a[lo], (size_t)(q->n - lo) * sizeof(Key));
    q->a[lo] = key;
    q->n++;
    return 0;
}

void queue_sort(Queue *q) { qsort(q->a, (size_t)q->n, sizeof(Key), key_qsort); }

int vec_push(Vec *v, int64_t x) {
    if (v->n == v->cap) {
        int64_t cap = v->cap ? 2 * v->cap : 4;
        int64_t *a = realloc(v->a, (size_t)cap * sizeof(int64_t));
        if (!a) return -1;
        v->a = a;
        v->cap = cap;
    }
    v->a[v->n++] = x;
    return 0;
}

void vec_remove(Vec *v, int64_t x) {
    for (int64_t k = 0; k < v->n; k++) {
        if (v->a[k] == x) {
            v->a[k] = v->a[--v->n];
            return;
        }
    }
}

/* In-place sort of int64 values (glibc's qsort is a merge sort that allocates). */
void sort_i64(int64_t *a, int64_t n) {
    while (n > 16) {
        int64_t x = a[0], y = a[n / 2], z = a[n - 1];
        int64_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i >= j) break;
            int64_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* recurse on the smaller part, loop on the larger */
        if (j + 1 < n - j - 1) {
            sort_i64(a, j + 1);
            a += j + 1;
            n -= j + 1;
        } else {
            sort_i64(a + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    for (int64_t k = 1; k < n; k++) {
        int64_t v = a[k], m = k - 1;
        while (m >= 0 && a[m] > v) {
            a[m + 1] = a[m];
            m--;
        }
        a[m + 1] = v;
    }
}

/* The k-th smallest (0-based) of a[0..n), reordering a. */
int64_t select_i64(int64_t *a, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t pivot = a[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                int64_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return a[k];
    }
    return a[k];
}
