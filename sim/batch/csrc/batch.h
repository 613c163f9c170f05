/* The batch simulator's compiled core: the same algorithm as sim/batch/engine.py,
 * sim/batch/backfill.py, sim/batch/nodes.py and sim/batch/priority.py, with the same
 * floating-point operations in the same order (built with -ffp-contract=off), so both
 * engines give identical schedules (tests/batch/test_core_equivalence.py). The Python
 * modules are the specification; read them first. */
#ifndef BATCH_H
#define BATCH_H

#include <stdint.h>

enum { EV_END = 0, EV_BOOT = 1, EV_OFF = 2, EV_ARRIVE = 3, EV_PRIO = 4, EV_BACKFILL = 5 };
enum { ORDER_FIFO = 0, ORDER_SJF = 1, ORDER_PRIORITY = 2 };
enum { NODE_ON = 0, NODE_OFF = 1, NODE_BOOTING = 2 };

typedef struct { int64_t t; int64_t kind; int64_t x; } Event;
typedef struct { Event *a; int64_t n, cap; } Heap;
typedef struct { int64_t k[4]; int64_t j; } Key;
typedef struct { Key *a; int64_t n, cap; } Queue;
typedef struct { int64_t *a; int64_t n, cap; } Vec;
typedef struct { int64_t start, end, cpu, mem, gpu, next; } Resv;

typedef struct {
    /* sizes */
    int64_t n, n_nodes, n_parts, n_users;
    /* jobs (borrowed) */
    const int64_t *part, *nn, *c, *m, *g, *run_s, *est, *limit, *submit, *earliest, *tier, *user;
    const int64_t *dep_ptr, *dep_parent;
    const double *static_prio;
    int has_deps;
    /* nodes and partitions (borrowed) */
    const int64_t *cap_cpu, *cap_mem, *cap_gpu, *pnode_ptr, *pnode_idx;
    const double *idle_w, *cpu_w, *gpu_w, *off_w, *boot_w;
    /* configuration */
    int64_t order, backfill, best_fit, bf_interval, bf_window, depth, max_test, calc_period;
    int64_t w_age, w_fs, max_age, half_life, power, suspend, boot_s, t0, completing, bf_resolution;
    /* node state */
    int64_t *free_cpu, *free_mem, *free_gpu, *ready_at, *idle_since, *last, *busy_cpu_s, *off_s;
    int8_t *state;
    double *energy;
    Vec *jobs_on;
    /* job state */
    int64_t *unmet, *child_ptr, *child_idx, *eligible_at, *start, *end, *expected_end;
    int64_t *alloc_ptr, *alloc_nodes, *run_pos, *running;
    int8_t *arrived, *backfilled, *started_now;
    int64_t n_running;
    /* priority */
    double *usage;
    int64_t *running_cpus;
    int8_t *seen;
    int64_t n_seen, last_tick;
    /* loop */
    Heap heap;
    Queue queue;
    int changed, bf_changed;
    int64_t bf_tick, prio_tick, done, events, passes_main, passes_bf;
    int64_t bf_last; /* the last backfill pass (or before the first change) */
    int bf_cadence;  /* that pass left jobs pending */
    /* scratch */
    int64_t *cand, *cand2, *times, *tmp_jobs;
    int64_t cap_times, cap_tmp;
    int8_t *part_blocked, *node_blocked;
    int64_t *resv_head;
    Resv *resv;
    int64_t n_resv, cap_resv;
    Vec resv_nodes; /* nodes with a reservation in this pass */
    int64_t *plain_t, *plain_i;
} Engine;

/* heap.c */
int heap_push(Heap *h, int64_t t, int64_t kind, int64_t x);
Event heap_pop(Heap *h);
int queue_insert(Queue *q, Key key);
void queue_sort(Queue *q);
int vec_push(Vec *v, int64_t x);
void vec_remove(Vec *v, int64_t x);
void sort_i64(int64_t *a, int64_t n);
int64_t select_i64(int64_t *a, int64_t n, int64_t k);

/* engine.c */
int engine_run(Engine *e, int (*progress)(void *, int64_t, int64_t), void *ctx);

/* backfill.c */
int backfill_pass(Engine *e, int64_t t);
int engine_start(Engine *e, int64_t j, const int64_t *nodes, int64_t count, int64_t t, int via_backfill);
void engine_choose(Engine *e, int64_t *cand, int64_t count, int64_t need);
void engine_drop_started(Engine *e);

#endif
