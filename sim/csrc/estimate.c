/* A dynamic scheduler's estimates, as sim/state.py (input arrival) and sim/view.py (a node's
 * queue list-scheduled on its cores): the same values, cached under the same keys. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

static inline double link_bw(const Shared *sh, int source, int node) {
    int row = source == FROM_FS ? sh->nn : source;
    return sh->link[(Py_ssize_t)row * sh->nn + node];
}

static const Run *sort_run;
static int by_size_desc(const void *x, const void *y) {
    int a = *(const int *)x, b = *(const int *)y;
    double sa = sort_run->sh->fsize[a], sb = sort_run->sh->fsize[b];
    if (sa != sb) return sa < sb ? 1 : -1;
    return a < b ? 1 : (a > b ? -1 : 0);
}

/* Offset in gpool of the task's inputs grouped by source ([groups, (source, count, files
 * largest first)...]), -2 while a producer is unplaced (sim.state.ClusterState._groups). */
int groups_of(Run *r, int task) {
    if (r->grp[task] >= 0) return r->grp[task];
    const Shared *sh = r->sh;
    int lo = sh->in_off[task], hi = sh->in_off[task + 1], k = hi - lo;
    int *src = malloc(sizeof(int) * (k ? k : 1)), *order = malloc(sizeof(int) * (k ? k : 1));
    int *files = malloc(sizeof(int) * (k ? k : 1));
    if (!src || !order || !files) { free(src); free(order); free(files); PyErr_NoMemory(); return -1; }
    int ng = 0, result = -2;
    for (int i = 0; i < k; i++) {
        int f = sh->in[lo + i], p = sh->producer[f];
        int s = p < 0 ? FROM_FS : r->node_of[p];
        if (p >= 0 && s < 0) goto done;
        src[i] = s;
        int j = 0;
        while (j < ng && order[j] != s) j++;
        if (j == ng) order[ng++] = s;
    }
    result = (int)r->gpool.n;
    if (ivec_push(&r->gpool, ng) < 0) { result = -1; goto done; }
    for (int j = 0; j < ng; j++) {
        int count = 0;
        for (int i = 0; i < k; i++)
            if (src[i] == order[j]) files[count++] = sh->in[lo + i];
        sort_run = r;
        qsort(files, count, sizeof(int), by_size_desc);
        if (ivec_push(&r->gpool, order[j]) < 0 || ivec_push(&r->gpool, count) < 0) { result = -1; goto done; }
        for (int i = 0; i < count; i++)
            if (ivec_push(&r->gpool, files[i]) < 0) { result = -1; goto done; }
    }
    r->grp[task] = result;
done:
    free(src); free(order); free(files);
    return result;
}

static double partial_input_ready(Run *r, int task, int node) {
    const Shared *sh = r->sh;
    double now = r->now, ready = now;
    for (int i = sh->in_off[task]; i < sh->in_off[task + 1]; i++) {
        int f = sh->in[i];
        Py_ssize_t key = (Py_ssize_t)f * sh->nn + node;
        if (r->present[key]) continue;
        int tr = r->in_flight[key];
        if (tr >= 0) {
            if (r->t_estimate.a[tr] > ready) ready = r->t_estimate.a[tr];
            continue;
        }
        int p = sh->producer[f];
        int source = p < 0 ? FROM_FS : r->node_of[p];
        if (p >= 0 && (source < 0 || source == node)) continue;
        double arrival = now + (sh->latency + sh->fsize[f] / link_bw(sh, source, node));
        if (arrival > ready) ready = arrival;
    }
    return ready;
}

/* When every input of task could be on node (sim.state.ClusterState.input_ready_estimate);
 * -1.0 with an exception set on failure (times are never negative). */
double input_ready(Run *r, int task, int node) {
    int off = groups_of(r, task);
    if (off == -1) return -1.0;
    if (off == -2) return partial_input_ready(r, task, node);
    const Shared *sh = r->sh;
    const int *g = r->gpool.a + off;
    int ng = *g++;
    double now = r->now, ready = now;
    for (int j = 0; j < ng; j++) {
        int source = g[0], count = g[1];
        const int *files = g + 2;
        g += 2 + count;
        if (source == node) continue;
        double bw = link_bw(sh, source, node);
        for (int i = 0; i < count; i++) {
            int f = files[i];
            Py_ssize_t key = (Py_ssize_t)f * sh->nn + node;
            if (r->present[key]) continue;
            int tr = r->in_flight[key];
            if (tr >= 0) {
                if (r->t_estimate.a[tr] > ready) ready = r->t_estimate.a[tr];
                continue;
            }
            double arrival = now + (sh->latency + sh->fsize[f] / bw);
            if (arrival > ready) ready = arrival;
            break;
        }
    }
    return ready;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : (a > b ? 1 : 0);
}

/* The node's list-scheduled future (sim.view.EngineView.projection): sorted per-core free
 * times (ncores of them) and the last queued start; cached until the node changes or time
 * moves. Returns the number of cores, -1 on failure. */
int projection(Run *r, int node, double **core_free, double *last_start) {
    const Shared *sh = r->sh;
    int off = r->pc_off[node], L = sh->ncores[node];
    double *cf = r->pc_free + off;
    *core_free = cf;
    if (r->pc_version[node] == r->version[node] && r->pc_now[node] == r->now) {
        *last_start = r->pc_last[node];
        return L;
    }
    double *ends = r->re_ends + off;
    if (r->re_version[node] != r->version[node]) {
        int n = 0;
        IVec *run = &r->running[node];
        for (Py_ssize_t i = 0; i < run->n; i++) {
            int t = run->a[i];
            for (int c = 0; c < sh->cores[t]; c++) ends[n++] = r->end[t];
        }
        for (Py_ssize_t i = 0; i < r->held_until[node].n; i++)
            for (int c = 0; c < r->held_cores[node].a[i]; c++) ends[n++] = r->held_until[node].a[i];
        qsort(ends, n, sizeof(double), cmp_double);
        r->re_n[node] = n;
        r->re_version[node] = r->version[node];
    }
    double now = r->now;
    int nre = r->re_n[node], nfree = (int)r->free_cores[node];
    if (nfree + nre != L) {
        PyErr_SetString(PyExc_RuntimeError, "core accounting broken on a node");
        return -1;
    }
    for (int i = 0; i < nfree; i++) cf[i] = now;
    memcpy(cf + nfree, ends, sizeof(double) * nre);
    if (nre && ends[0] < now) qsort(cf, L, sizeof(double), cmp_double);
    double last = now;
    IVec *q = &r->queues[node];
    for (Py_ssize_t k = r->heads[node]; k < q->n; k++) {
        int task = q->a[k], c = sh->cores[task];
        double ready = input_ready(r, task, node);
        if (ready < 0) return -1;
        double start = last;
        if (cf[c - 1] > start) start = cf[c - 1];
        if (ready > start) start = ready;
        double finish = start + duration(sh, task, node);
        memmove(cf, cf + c, sizeof(double) * (L - c));
        int m = L - c, lo = 0, hi = m; /* bisect_right */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (finish < cf[mid]) hi = mid; else lo = mid + 1;
        }
        memmove(cf + lo + c, cf + lo, sizeof(double) * (m - lo));
        for (int i = 0; i < c; i++) cf[lo + i] = finish;
        last = start;
    }
    r->pc_version[node] = r->version[node];
    r->pc_now[node] = now;
    r->pc_last[node] = last;
    *last_start = last;
    return L;
}

/* sim.view.EngineView.estimate_finish. */
int estimate_finish(Run *r, int task, int node, double *out) {
    const Shared *sh = r->sh;
    double *cf, last;
    int L = projection(r, node, &cf, &last);
    if (L < 0) return -1;
    int cores = sh->cores[task];
    double start = input_ready(r, task, node);
    if (start < 0) return -1;
    double at = cf[(cores < L ? cores : L) - 1];
    if (at > start) start = at;
    if (last > start) start = last;
    *out = start + duration(sh, task, node);
    return 0;
}
