/* The event loop, the nodes' state and energy, priorities and the main scheduler: see
 * sim/batch/engine.py, nodes.py and priority.py (the specification, line for line). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

/* --- nodes: energy ------------------------------------------------------------------ */
static double power_w(const Engine *e, int64_t i) {
    if (e->state[i] == NODE_OFF) return e->off_w[i];
    if (e->state[i] == NODE_BOOTING) return e->boot_w[i];
    double cpu_share = (double)(e->cap_cpu[i] - e->free_cpu[i]) / (double)e->cap_cpu[i];
    return e->idle_w[i] + e->cpu_w[i] * cpu_share + e->gpu_w[i] * (double)(e->cap_gpu[i] - e->free_gpu[i]);
}

static void charge(Engine *e, int64_t i, int64_t now) {
    int64_t dt = now - e->last[i];
    if (dt > 0) {
        e->energy[i] += power_w(e, i) * (double)dt;
        e->busy_cpu_s[i] += (e->cap_cpu[i] - e->free_cpu[i]) * dt;
        if (e->state[i] == NODE_OFF) e->off_s[i] += dt;
    }
    e->last[i] = now;
}

/* --- priority ----------------------------------------------------------------------- */
static double fairshare(const Engine *e, int64_t user) {
    double total = 0.0;
    for (int64_t u = 0; u < e->n_users; u++) total += e->usage[u];
    if (total <= 0.0 || e->n_seen == 0) return 0.5;
    double share = (e->usage[user] > 0.0 ? e->usage[user] : 0.0) / total;
    return pow(2.0, -share * (double)e->n_seen);
}

static int64_t priority(const Engine *e, int64_t j, int64_t eligible, int64_t now) {
    double value = e->static_prio[j];
    if (e->w_age) {
        if (e->max_age > 0) {
            double age = (double)(now - eligible) / (double)e->max_age;
            value += (double)e->w_age * (age < 1.0 ? age : 1.0);
        } else {
            value += (double)e->w_age;
        }
    }
    if (e->w_fs) value += (double)e->w_fs * fairshare(e, e->user[j]);
    return (int64_t)value;
}

static void prio_tick(Engine *e, int64_t now) {
    int64_t dt = now - e->last_tick;
    double decay = e->half_life > 0 ? pow(0.5, (double)dt / (double)e->half_life) : 1.0;
    for (int64_t u = 0; u < e->n_users; u++) e->usage[u] = e->usage[u] * decay + (double)(e->running_cpus[u] * dt);
    e->last_tick = now;
}

static Key make_key(const Engine *e, int64_t j, int64_t t) {
    Key key = {{0, 0, 0, 0}, j};
    if (e->order == ORDER_FIFO) {
        key.k[0] = e->submit[j];
        key.k[1] = j;
    } else if (e->order == ORDER_SJF) {
        key.k[0] = e->est[j];
        key.k[1] = e->submit[j];
        key.k[2] = j;
    } else {
        key.k[0] = -e->tier[j];
        key.k[1] = -priority(e, j, e->eligible_at[j], t);
        key.k[2] = e->submit[j];
        key.k[3] = j;
    }
    return key;
}

/* --- events ------------------------------------------------------------------------- */
static int enqueue(Engine *e, int64_t j, int64_t t) {
    e->eligible_at[j] = t;
    if (e->order == ORDER_PRIORITY && !e->seen[e->user[j]]) {
        e->seen[e->user[j]] = 1;
        e->n_seen++;
    }
    if (queue_insert(&e->queue, make_key(e, j, t))) return -1;
    e->changed = e->bf_changed = 1;
    if (e->order == ORDER_PRIORITY && e->prio_tick < 0) {
        e->prio_tick = (t / e->calc_period + 1) * e->calc_period;
        if (heap_push(&e->heap, e->prio_tick, EV_PRIO, 0)) return -1;
    }
    return 0;
}

static int recalculate(Engine *e, int64_t t) {
    prio_tick(e, t);
    for (int64_t q = 0; q < e->queue.n; q++) e->queue.a[q] = make_key(e, e->queue.a[q].j, t);
    queue_sort(&e->queue);
    e->changed = e->bf_changed = 1;
    e->prio_tick = -1;
    if (e->queue.n) {
        e->prio_tick = t + e->calc_period;
        if (heap_push(&e->heap, e->prio_tick, EV_PRIO, 0)) return -1;
    }
    return 0;
}

static int end_job(Engine *e, int64_t j, int64_t t) {
    e->end[j] = t - e->completing;
    e->done++;
    int64_t pos = e->run_pos[j]; /* running-set removal: order does not matter */
    int64_t moved = e->running[--e->n_running];
    e->running[pos] = moved;
    e->run_pos[moved] = pos;
    const int64_t *nodes = e->alloc_nodes + e->alloc_ptr[j];
    for (int64_t k = 0; k < e->nn[j]; k++) {
        int64_t i = nodes[k];
        charge(e, i, t);
        e->free_cpu[i] += e->c[j];
        e->free_mem[i] += e->m[j];
        e->free_gpu[i] += e->g[j];
        vec_remove(&e->jobs_on[i], j);
        if (e->jobs_on[i].n == 0) {
            e->idle_since[i] = t;
            if (e->power && heap_push(&e->heap, t + e->suspend, EV_OFF, i)) return -1;
        }
    }
    int64_t user = e->user[j];
    e->running_cpus[user] -= e->nn[j] * e->c[j];
    e->usage[user] += (double)(e->nn[j] * e->c[j] * (t - e->last_tick));
    for (int64_t k = e->child_ptr[j]; k < e->child_ptr[j + 1]; k++) {
        int64_t child = e->child_idx[k];
        if (--e->unmet[child] == 0 && e->arrived[child] && enqueue(e, child, t)) return -1;
    }
    e->changed = e->bf_changed = 1;
    return 0;
}

int engine_start(Engine *e, int64_t j, const int64_t *nodes, int64_t count, int64_t t, int via_backfill) {
    int64_t ready = t;
    int64_t *slot = e->alloc_nodes + e->alloc_ptr[j];
    for (int64_t k = 0; k < count; k++) {
        int64_t i = nodes[k];
        slot[k] = i;
        charge(e, i, t);
        int newly = 0;
        if (e->state[i] == NODE_OFF) {
            e->state[i] = NODE_BOOTING;
            e->ready_at[i] = t + e->boot_s;
            newly = 1;
        }
        if (e->state[i] == NODE_BOOTING && e->ready_at[i] > ready) ready = e->ready_at[i];
        e->free_cpu[i] -= e->c[j];
        e->free_mem[i] -= e->m[j];
        e->free_gpu[i] -= e->g[j];
        if (vec_push(&e->jobs_on[i], j)) return -1;
        if (newly && heap_push(&e->heap, e->ready_at[i], EV_BOOT, i)) return -1;
    }
    e->start[j] = ready;
    e->expected_end[j] = ready + e->est[j];
    e->backfilled[j] = (int8_t)via_backfill;
    e->run_pos[j] = e->n_running;
    e->running[e->n_running++] = j;
    e->started_now[j] = 1;
    int64_t user = e->user[j];
    e->running_cpus[user] += e->nn[j] * e->c[j];
    e->usage[user] -= (double)(e->nn[j] * e->c[j] * (t - e->last_tick));
    return heap_push(&e->heap, ready + e->run_s[j] + e->completing, EV_END, j);
}

static int64_t cmp_mode; /* qsort has no context argument: set before each sort */
static const Engine *cmp_engine;

static int choose_cmp(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    int off_a = cmp_engine->state[a] == NODE_OFF, off_b = cmp_engine->state[b] == NODE_OFF;
    if (off_a != off_b) return off_a - off_b;
    if (cmp_mode) {
        int64_t fa = cmp_engine->free_cpu[a], fb = cmp_engine->free_cpu[b];
        if (fa != fb) return fa < fb ? -1 : 1;
    }
    return a < b ? -1 : (a > b);
}

/* Put the first `need` candidates in preference order at the front of cand (what sorting
 * all of them and taking the first `need` gives): a bounded selection when need is small. */
void engine_choose(Engine *e, int64_t *cand, int64_t count, int64_t need) {
    cmp_mode = e->best_fit;
    cmp_engine = e;
    if (need * 4 >= count) {
        qsort(cand, (size_t)count, sizeof(int64_t), choose_cmp);
        return;
    }
    /* keep the need best in cand[0..need), sorted; insertion from the rest */
    qsort(cand, (size_t)need, sizeof(int64_t), choose_cmp);
    for (int64_t k = need; k < count; k++) {
        int64_t x = cand[k];
        if (choose_cmp(&x, &cand[need - 1]) >= 0) continue;
        int64_t m = need - 2;
        while (m >= 0 && choose_cmp(&x, &cand[m]) < 0) {
            cand[m + 1] = cand[m];
            m--;
        }
        cand[m + 1] = x;
    }
}

void engine_drop_started(Engine *e) {
    int64_t out = 0;
    for (int64_t q = 0; q < e->queue.n; q++) {
        int64_t j = e->queue.a[q].j;
        if (e->started_now[j]) e->started_now[j] = 0;
        else e->queue.a[out++] = e->queue.a[q];
    }
    e->queue.n = out;
}

static int main_pass(Engine *e, int64_t t) {
    e->passes_main++;
    memset(e->part_blocked, 0, (size_t)e->n_parts);
    memset(e->node_blocked, 0, (size_t)e->n_nodes);
    int64_t n_blocked = 0, any_started = 0;
    for (int64_t q = 0; q < e->queue.n; q++) {
        int64_t j = e->queue.a[q].j, p = e->part[j];
        if (e->part_blocked[p]) continue;
        int64_t count = 0, c = e->c[j], m = e->m[j], g = e->g[j];
        for (int64_t k = e->pnode_ptr[p]; k < e->pnode_ptr[p + 1]; k++) {
            int64_t i = e->pnode_idx[k];
            if (e->free_cpu[i] >= c && e->free_mem[i] >= m && e->free_gpu[i] >= g && !e->node_blocked[i]) e->cand[count++] = i;
        }
        if (count >= e->nn[j]) {
            engine_choose(e, e->cand, count, e->nn[j]);
            if (engine_start(e, j, e->cand, e->nn[j], t, 0)) return -1;
            any_started = 1;
        } else {
            e->part_blocked[p] = 1;
            for (int64_t k = e->pnode_ptr[p]; k < e->pnode_ptr[p + 1]; k++) e->node_blocked[e->pnode_idx[k]] = 1;
            if (++n_blocked == e->n_parts) break;
        }
    }
    if (any_started) engine_drop_started(e);
    return 0;
}

/* When Slurm's backfill agent next runs after a change at t (engine.py, _next_backfill): on
 * the bf_interval cadence of the last pass while jobs were left pending, else at the next
 * one-second poll once bf_interval has passed. */
static int64_t next_backfill(const Engine *e, int64_t t) {
    int64_t step = e->bf_interval;
    if (e->bf_cadence) {
        int64_t k = (t - e->bf_last + step - 1) / step;
        return e->bf_last + step * (k > 1 ? k : 1);
    }
    return e->bf_last + step > t + 1 ? e->bf_last + step : t + 1;
}

int engine_run(Engine *e, int (*progress)(void *, int64_t, int64_t), void *ctx) {
    int64_t t = e->t0;
    while (e->heap.n && e->done < e->n) {
        t = e->heap.a[0].t;
        int backfill_now = 0, recalc = 0;
        while (e->heap.n && e->heap.a[0].t == t) {
            Event ev = heap_pop(&e->heap);
            e->events++;
            int64_t x = ev.x;
            if (ev.kind == EV_END) {
                if (end_job(e, x, t)) return -1;
            } else if (ev.kind == EV_ARRIVE) {
                e->arrived[x] = 1;
                if (e->unmet[x] == 0 && enqueue(e, x, t)) return -1;
            } else if (ev.kind == EV_BOOT) {
                if (e->state[x] == NODE_BOOTING && e->ready_at[x] <= t) {
                    charge(e, x, t);
                    e->state[x] = NODE_ON;
                }
            } else if (ev.kind == EV_OFF) {
                if (e->state[x] == NODE_ON && e->jobs_on[x].n == 0 && e->idle_since[x] + e->suspend <= t) {
                    charge(e, x, t);
                    e->state[x] = NODE_OFF;
                }
            } else if (ev.kind == EV_PRIO) {
                recalc = 1;
            } else {
                backfill_now = 1;
            }
        }
        if (recalc && recalculate(e, t)) return -1;
        if (e->changed && e->queue.n && main_pass(e, t)) return -1;
        e->changed = 0;
        if (backfill_now) {
            e->bf_tick = -1;
            if (e->queue.n && e->backfill && backfill_pass(e, t)) return -1;
            e->bf_changed = 0;
            e->bf_last = t;
            e->bf_cadence = e->queue.n > 0;
        }
        if (e->bf_changed && e->backfill && e->bf_tick < 0) {
            e->bf_tick = next_backfill(e, t);
            if (heap_push(&e->heap, e->bf_tick, EV_BACKFILL, 0)) return -1;
        }
        if (progress && e->events % 65536 < 8 && progress(ctx, e->done, e->n)) return -2;
    }
    int64_t finish = t > e->t0 ? t : e->t0;
    for (int64_t i = 0; i < e->n_nodes; i++) charge(e, i, finish);
    return 0;
}
