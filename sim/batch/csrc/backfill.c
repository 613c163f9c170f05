/* One backfill pass: sim/batch/backfill.py (Plan) and engine.py (_backfill_pass). */
#include <stdlib.h>
#include <string.h>

#include "batch.h"

static int reserve(Engine *e, const int64_t *nodes, int64_t count, int64_t start, int64_t end, int64_t c, int64_t m, int64_t g) {
    for (int64_t k = 0; k < count; k++) {
        int64_t i = nodes[k];
        if (e->n_resv == e->cap_resv) {
            int64_t cap = e->cap_resv ? 2 * e->cap_resv : 256;
            Resv *a = realloc(e->resv, (size_t)cap * sizeof(Resv));
            if (!a) return -1;
            e->resv = a;
            e->cap_resv = cap;
        }
        if (e->resv_head[i] < 0 && vec_push(&e->resv_nodes, i)) return -1;
        Resv r = {start, end, c, m, g, e->resv_head[i]};
        e->resv[e->n_resv] = r;
        e->resv_head[i] = e->n_resv++;
    }
    return 0;
}

static int fits_empty(const Engine *e, int64_t i, int64_t c, int64_t m, int64_t g) {
    return e->cap_cpu[i] >= c && e->cap_mem[i] >= m && e->cap_gpu[i] >= g;
}

static int can_host(const Engine *e, int64_t i, int64_t t, int64_t duration, int64_t c, int64_t m, int64_t g) {
    if (!fits_empty(e, i, c, m, g)) return 0;
    int64_t end = t + duration;
    /* the points: t, then every reservation start inside (t, end) */
    int64_t r = -2; /* -2: the point t itself; then walk the reservations */
    for (;;) {
        int64_t p;
        if (r == -2) {
            p = t;
            r = e->resv_head[i];
        } else {
            while (r >= 0 && !(t < e->resv[r].start && e->resv[r].start < end)) r = e->resv[r].next;
            if (r < 0) break;
            p = e->resv[r].start;
            r = e->resv[r].next;
        }
        int64_t cpu = e->cap_cpu[i] - c, mem = e->cap_mem[i] - m, gpu = e->cap_gpu[i] - g;
        const Vec *on = &e->jobs_on[i];
        for (int64_t k = 0; k < on->n; k++) {
            int64_t job = on->a[k];
            if (e->expected_end[job] > p) {
                cpu -= e->c[job];
                mem -= e->m[job];
                gpu -= e->g[job];
            }
        }
        for (int64_t q = e->resv_head[i]; q >= 0; q = e->resv[q].next) {
            if (e->resv[q].start <= p && p < e->resv[q].end) {
                cpu -= e->resv[q].cpu;
                mem -= e->resv[q].mem;
                gpu -= e->resv[q].gpu;
            }
        }
        if (cpu < 0 || mem < 0 || gpu < 0) return 0;
    }
    return 1;
}

static const Engine *sort_engine;

static int by_expected_end(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    int64_t ea = sort_engine->expected_end[a], eb = sort_engine->expected_end[b];
    if (ea != eb) return ea < eb ? -1 : 1;
    return a < b ? -1 : (a > b);
}

static int64_t free_from(Engine *e, int64_t i, int64_t now, int64_t c, int64_t m, int64_t g) {
    int64_t cpu = e->free_cpu[i], mem = e->free_mem[i], gpu = e->free_gpu[i];
    if (cpu >= c && mem >= m && gpu >= g) return now;
    if (!fits_empty(e, i, c, m, g)) return -1;
    const Vec *on = &e->jobs_on[i];
    if (on->n > e->cap_tmp) {
        int64_t *a = realloc(e->tmp_jobs, (size_t)on->n * sizeof(int64_t));
        if (!a) return -2;
        e->tmp_jobs = a;
        e->cap_tmp = on->n;
    }
    memcpy(e->tmp_jobs, on->a, (size_t)on->n * sizeof(int64_t));
    sort_engine = e;
    qsort(e->tmp_jobs, (size_t)on->n, sizeof(int64_t), by_expected_end);
    for (int64_t k = 0; k < on->n; k++) {
        int64_t j = e->tmp_jobs[k];
        cpu += e->c[j];
        mem += e->m[j];
        gpu += e->g[j];
        if (cpu >= c && mem >= m && gpu >= g) return e->expected_end[j] > now ? e->expected_end[j] : now;
    }
    return -1;
}


static const int64_t *plain_t_sort;

static int by_plain(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb; /* indices into plain arrays */
    if (plain_t_sort[a] != plain_t_sort[b]) return plain_t_sort[a] < plain_t_sort[b] ? -1 : 1;
    return 0;
}

/* earliest(): returns the start (or -1) and leaves the hosting nodes in e->cand2[0..*count) */
static int64_t earliest(Engine *e, int64_t p, int64_t now, int64_t horizon, int64_t duration, int64_t need, int64_t c, int64_t m, int64_t g, int64_t *count) {
    int64_t n_plain = 0, n_res = 0, n_times = 0;
    int64_t bound = 1 + e->n_nodes + e->n_resv;
    for (int64_t k = e->pnode_ptr[p]; k < e->pnode_ptr[p + 1]; k++) bound += e->jobs_on[e->pnode_idx[k]].n;
    if (bound > e->cap_times) {
        int64_t *a = realloc(e->times, (size_t)bound * sizeof(int64_t));
        if (!a) return -2;
        e->times = a;
        e->cap_times = bound;
    }
    int64_t *reserved = e->cand; /* scratch: nodes with reservations */
    e->times[n_times++] = now;
    for (int64_t k = e->pnode_ptr[p]; k < e->pnode_ptr[p + 1]; k++) {
        int64_t i = e->pnode_idx[k];
        if (e->resv_head[i] >= 0) {
            reserved[n_res++] = i;
            for (int64_t r = e->resv_head[i]; r >= 0; r = e->resv[r].next) e->times[n_times++] = e->resv[r].end;
            for (int64_t q = 0; q < e->jobs_on[i].n; q++) e->times[n_times++] = e->expected_end[e->jobs_on[i].a[q]];
        } else {
            int64_t t = free_from(e, i, now, c, m, g);
            if (t == -2) return -2;
            if (t >= 0) {
                e->plain_t[n_plain] = t;
                e->plain_i[n_plain] = i;
                n_plain++;
                e->times[n_times++] = t;
            }
        }
    }
    if (n_res == 0) {
        /* No node holds a reservation: availability only grows, so the answer is the
         * need-th smallest release time (the same instant the scan below would find). */
        if (n_plain < need) return -1;
        int64_t *copy = e->plain_t + e->n_nodes;
        memcpy(copy, e->plain_t, (size_t)n_plain * sizeof(int64_t));
        int64_t t = select_i64(copy, n_plain, need - 1);
        if (t > horizon) return -1;
        int64_t out = 0;
        for (int64_t k = 0; k < n_plain; k++) {
            if (e->plain_t[k] <= t) e->cand2[out++] = e->plain_i[k];
        }
        *count = out;
        return t;
    }
    /* plain.sort(): by time; which nodes come first among equal times does not matter,
     * since the hosts are a set the caller orders (engine_choose) */
    int64_t *order = e->tmp_jobs;
    for (int64_t k = 0; k < n_plain; k++) order[k] = k;
    plain_t_sort = e->plain_t;
    qsort(order, (size_t)n_plain, sizeof(int64_t), by_plain);
    int64_t *sorted_i = e->cand2;
    int64_t *sorted_t = e->plain_t + e->n_nodes; /* plain_t has room for 2 x nodes */
    for (int64_t k = 0; k < n_plain; k++) {
        sorted_i[k] = e->plain_i[order[k]];
        sorted_t[k] = e->plain_t[order[k]];
    }
    sort_i64(e->times, n_times);
    int64_t ready = 0;
    for (int64_t k = 0; k < n_times; k++) {
        int64_t t = e->times[k];
        if (k > 0 && t == e->times[k - 1]) continue;
        if (t > horizon) break;
        while (ready < n_plain && sorted_t[ready] <= t) ready++;
        int64_t hosts = 0;
        for (int64_t q = 0; q < n_res; q++) {
            if (can_host(e, reserved[q], t, duration, c, m, g)) hosts++;
        }
        if (ready + hosts >= need) {
            int64_t out = ready;
            for (int64_t q = 0; q < n_res; q++) {
                if (can_host(e, reserved[q], t, duration, c, m, g)) sorted_i[out++] = reserved[q];
            }
            *count = out;
            return t;
        }
    }
    return -1;
}

/* Per pass: the nodes with a shape free now, cached per (partition, c, m, g) until a start. */
#define SHAPES 64
typedef struct { int64_t p, c, m, g, offset, count; } Shape;

int backfill_pass(Engine *e, int64_t t) {
    e->passes_bf++;
    for (int64_t k = 0; k < e->n_running; k++) {
        int64_t j = e->running[k];
        if (e->expected_end[j] <= t) {
            int64_t limit = e->limit[j];
            e->expected_end[j] = (limit >= 0 && e->start[j] + limit > t) ? e->start[j] + limit : t + 1;
        }
    }
    for (int64_t k = 0; k < e->resv_nodes.n; k++) e->resv_head[e->resv_nodes.a[k]] = -1;
    e->resv_nodes.n = 0;
    e->n_resv = 0;
    Shape shapes[SHAPES];
    int64_t n_shapes = 0, used = 0;
    int64_t *cache = e->plain_i + e->n_nodes; /* plain_i has room for (SHAPES + 1) x nodes */
    int64_t reserved = 0, any_started = 0;
    int64_t limit = e->queue.n < e->max_test ? e->queue.n : e->max_test;
    for (int64_t q = 0; q < limit; q++) {
        int64_t j = e->queue.a[q].j;
        int64_t p = e->part[j], need = e->nn[j], c = e->c[j], m = e->m[j], g = e->g[j], duration = e->est[j];
        int64_t *free_nodes = NULL, n_free = 0;
        for (int64_t s = 0; s < n_shapes; s++) {
            if (shapes[s].p == p && shapes[s].c == c && shapes[s].m == m && shapes[s].g == g) {
                free_nodes = cache + shapes[s].offset;
                n_free = shapes[s].count;
                break;
            }
        }
        if (!free_nodes) {
            int64_t *dst = n_shapes < SHAPES ? cache + used : e->cand2;
            for (int64_t k = e->pnode_ptr[p]; k < e->pnode_ptr[p + 1]; k++) {
                int64_t i = e->pnode_idx[k];
                if (e->free_cpu[i] >= c && e->free_mem[i] >= m && e->free_gpu[i] >= g) dst[n_free++] = i;
            }
            if (n_shapes < SHAPES) {
                Shape s = {p, c, m, g, used, n_free};
                shapes[n_shapes++] = s;
                used += n_free;
            }
            free_nodes = dst;
        }
        int64_t n_fit = 0;
        if (n_free >= need) {
            for (int64_t k = 0; k < n_free; k++) {
                int64_t i = free_nodes[k];
                if (e->resv_head[i] < 0 || can_host(e, i, t, duration, c, m, g)) e->cand[n_fit++] = i;
            }
        }
        if (n_fit >= need) {
            engine_choose(e, e->cand, n_fit, need);
            if (engine_start(e, j, e->cand, need, t, 1)) return -1;
            any_started = 1;
            n_shapes = used = 0;
            continue;
        }
        if (reserved < e->depth) {
            int64_t count = 0;
            int64_t begin = earliest(e, p, t, t + e->bf_window, duration, need, c, m, g, &count);
            if (begin == -2) return -1;
            if (begin >= 0) {
                memcpy(e->cand, e->cand2, (size_t)count * sizeof(int64_t));
                engine_choose(e, e->cand, count, need);
                /* engine.py _reserved_slots: Slurm's plan is kept in bf_resolution slots */
                int64_t slot_start = begin, slot_end = begin + duration, step = e->bf_resolution;
                if (step > 1) {
                    slot_start = begin / step * step;
                    slot_end = (begin + duration) / step * step;
                    if (slot_end < slot_start + step) slot_end = slot_start + step;
                }
                if (reserve(e, e->cand, need, slot_start, slot_end, c, m, g)) return -1;
                reserved++;
            }
        }
    }
    if (any_started) engine_drop_started(e);
    return 0;
}
