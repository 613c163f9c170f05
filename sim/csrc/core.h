/* The compiled simulation core (module sim._core): data structures shared by its C files.
 *
 * It is the same engine as sim/engine.py + sim/state.py + sim/network.py + sim/view.py's
 * projections, with the same arithmetic in the same order (IEEE doubles, no FMA contraction:
 * setup.py builds with -ffp-contract=off), so both paths give bit-identical results;
 * tests/sim/test_core_equivalence.py checks it on generated instances. */
#ifndef WASS_SIM_CORE_H
#define WASS_SIM_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define FROM_FS (-1)

/* Growable arrays. */
typedef struct { int *a; Py_ssize_t n, cap; } IVec;
typedef struct { double *a; Py_ssize_t n, cap; } DVec;
int ivec_push(IVec *v, int x);
int dvec_push(DVec *v, double x);
int ivec_copy(IVec *dst, const IVec *src);
int dvec_copy(DVec *dst, const DVec *src);

/* Heap entries; each heap orders its entries like Python's heapq orders the same tuples. */
typedef struct { double t; int64_t seq; int task; } TaskEv;       /* (end, start seq, task) */
typedef struct { double t; int64_t seq; int kind, key; int64_t version; } NetEv;
typedef struct { double target; int transfer; } Target;          /* (served target, transfer) */
typedef struct { double share; int r; } Share;                    /* (fair share, resource) */
#define HEAP_DECL(T) typedef struct { T *a; Py_ssize_t n, cap; } T##Heap; \
    int T##_push(T##Heap *h, T x); T T##_pop(T##Heap *h); int T##_copy(T##Heap *d, const T##Heap *s);
HEAP_DECL(TaskEv)
HEAP_DECL(NetEv)
HEAP_DECL(Target)
HEAP_DECL(Share)

/* A workflow and a platform as flat arrays (sim.compiled), shared by a run and its forks. */
typedef struct {
    Py_ssize_t refs;
    int nt, nn, nf;
    double *work; int *cores; long long *memory; int *gpus; int *n_parents;
    int *ch_off, *ch, *in_off, *in, *out_off, *out;
    double *fsize; int *producer;
    double *speed; int *ncores; long long *nmemory; int *ngpus; double *bw;
    double latency, fs_bw;
    double *link; /* (nn + 1) x nn; row nn is the shared filesystem's (Python's row -1) */
    int *prefers; double *gspeed; /* per task: takes one GPU where there are any; per node */
    int nrel; double *rel_t;      /* distinct positive release times, ascending */
    int *rel_off, *rel_task;      /* per release time, the tasks released (CSR) */
    int *relf_off, *relf;         /* per release time, the inputs first read then (CSR) */
    unsigned char *late;          /* per file: its shared-filesystem reads wait for a release */
} Shared;

/* sim.compiled.gpus_on and sim.compiled.duration: the same arithmetic. */
static inline int gpus_on(const Shared *sh, int task, int node) {
    if (sh->gpus[task]) return sh->gpus[task];
    return sh->prefers[task] && sh->ngpus[node] > 0 ? 1 : 0;
}

static inline double duration(const Shared *sh, int task, int node) {
    int used = gpus_on(sh, task, node);
    if (used && sh->gspeed[node] > 0) return sh->work[task] / (sh->gspeed[node] * (double)used);
    return sh->work[task] / (sh->speed[node] * (double)sh->cores[task]);
}

typedef struct {
    int up, down, count;
    double rate, served, last;
    int64_t version;
    TargetHeap targets;
    int pos_up, pos_down, pos_active; /* positions in on[up], on[down], active (-1: absent) */
} Group;

typedef struct {
    int fair, nres, width;
    double latency;
    double *capacity, *cap_left;
    int *active, *unfrozen;
    Group *groups; int ngroups, gcap;
    int *gid; /* up * width + down -> group index, -1 */
    IVec *on; IVec act;
    IVec p_up, p_down; DVec p_size; /* per transfer, for its activation */
    NetEvHeap heap;
    int64_t seq;
    int dirty;
    double *new_rate; int64_t *rated; int64_t stamp;
} Net;

typedef struct {
    PyObject_HEAD
    Shared *sh;
    int dynamic;
    double now;
    int *node_of, *parents_left, *missing;
    double *ready, *start, *end;
    long long *free_cores, *free_memory, *free_gpus;
    IVec *queues; int *heads;
    IVec *running;               /* per node, running tasks (order irrelevant: ends get sorted) */
    DVec *held_until; IVec *held_cores;
    int64_t *version;
    unsigned char *present; IVec *located;
    int *whead; IVec wp_task, wp_next; /* waiters per (file, node) key: linked lists in a pool */
    int *in_flight;
    DVec t_estimate, t_start, t_end; IVec t_file, t_src, t_dst;
    IVec *eager;
    TaskEvHeap theap;
    IVec started;
    unsigned char *dirty;
    IVec batch, deciding; Py_ssize_t position;
    int *grp; IVec gpool;        /* per task, offset of its input groups in gpool, -1 */
    /* projection caches (values only depend on their keys, as in sim/view.py) */
    int64_t *pc_version; double *pc_now; double *pc_free; int *pc_off; double *pc_last;
    int64_t *re_version; double *re_ends; int *re_n;
    Net net;
    PyObject *choose, *order;
    PyObject *chooser;           /* a sim._core.Chooser deciding in C (chooser.c), or NULL */
    int pinned_task, pinned_node; /* with a chooser: this task goes to this node (-1: none) */
} Run;

extern PyTypeObject RunType;

/* network.c */
int net_init(Net *n, const Shared *sh, int fair);
void net_free(Net *n);
int net_copy(Net *d, const Net *s);
int net_start(Net *n, const Shared *sh, int transfer, double size, int source, int dst, double now);
double net_next_time(Net *n);
int net_pop_finished(Net *n, double now, IVec *done);
int net_settle(Net *n, double now);

/* estimate.c */
int groups_of(Run *r, int task);
double input_ready(Run *r, int task, int node);
int projection(Run *r, int node, double **core_free, double *last_start);
int estimate_finish(Run *r, int task, int node, double *out);

/* run.c */
int run_resume(Run *r);
int run_start_static(Run *r);
int run_list_copies(Run *r);
void run_hold(Run *r, int node, long long cores, double until);
int run_push_releases(Run *r);

/* view.c */
PyObject *doubles_list(const double *a, Py_ssize_t n);
PyObject *ints_list(const int *a, Py_ssize_t n);
PyObject *run_estimate_finish_all(Run *r, PyObject *arg);
PyObject *run_estimate_finish(Run *r, PyObject *args);
PyObject *run_projection(Run *r, PyObject *arg);
PyObject *run_available_times(Run *r, PyObject *noargs);
PyObject *run_free_cores(Run *r, PyObject *noargs);
PyObject *run_located(Run *r, PyObject *arg);
PyObject *run_node_of(Run *r, PyObject *arg);

/* chooser.c */
extern PyTypeObject ChooserType;
int chooser_choose(PyObject *chooser, Run *r, int task);
void chooser_order(PyObject *chooser, int *tasks, Py_ssize_t n);

/* records.c */
PyObject *run_task_records(Run *r, PyObject *args);
PyObject *run_transfer_records(Run *r, PyObject *args);

#endif
