/* The event loop and the placement/dispatch rules of both modes, as sim/engine.py's _Run. */
#include "core.h"

#include <math.h>

static int add_present(Run *r, int f, int node) {
    Py_ssize_t key = (Py_ssize_t)f * r->sh->nn + node;
    if (r->present[key]) return 0;
    r->present[key] = 1;
    return ivec_push(&r->located[f], node);
}

static int start_transfer(Run *r, int f, int source, int dst) {
    const Shared *sh = r->sh;
    int transfer = (int)r->t_file.n;
    double size = sh->fsize[f];
    int row = source == FROM_FS ? sh->nn : source;
    if (ivec_push(&r->t_file, f) < 0 || ivec_push(&r->t_src, source) < 0 ||
        ivec_push(&r->t_dst, dst) < 0 || dvec_push(&r->t_start, r->now) < 0 ||
        dvec_push(&r->t_end, NAN) < 0)
        return -1;
    r->in_flight[(Py_ssize_t)f * sh->nn + dst] = transfer;
    double d = sh->latency + size / sh->link[(Py_ssize_t)row * sh->nn + dst];
    if (dvec_push(&r->t_estimate, r->now + d) < 0) return -1;
    return net_start(&r->net, sh, transfer, size, source, dst, r->now);
}

static int add_waiter(Run *r, Py_ssize_t key, int task) {
    int at = (int)r->wp_task.n;
    if (ivec_push(&r->wp_task, task) < 0 || ivec_push(&r->wp_next, r->whead[key]) < 0) return -1;
    r->whead[key] = at;
    return 0;
}

int run_list_copies(Run *r) {
    const Shared *sh = r->sh;
    for (int task = 0; task < sh->nt; task++) {
        int node = r->node_of[task];
        for (int i = sh->in_off[task]; i < sh->in_off[task + 1]; i++) {
            int f = sh->in[i], p = sh->producer[f];
            if (p >= 0 && r->node_of[p] == node) continue;
            Py_ssize_t key = (Py_ssize_t)f * sh->nn + node;
            if (r->whead[key] < 0 && ivec_push(&r->eager[f], node) < 0) return -1;
            if (add_waiter(r, key, task) < 0) return -1;
            r->missing[task]++;
        }
    }
    return 0;
}

/* One event per release time, first at its instant (sequence -2; task -1 - nn - group), as
 * sim/engine.py's _Run.__init__ pushes them. */
int run_push_releases(Run *r) {
    const Shared *sh = r->sh;
    for (int k = 0; k < sh->nrel; k++) {
        TaskEv e = {sh->rel_t[k], -2, -1 - sh->nn - k};
        if (TaskEv_push(&r->theap, e) < 0) return -1;
    }
    return 0;
}

void run_hold(Run *r, int node, long long cores, double until) {
    r->free_cores[node] -= cores;
    dvec_push(&r->held_until[node], until);
    ivec_push(&r->held_cores[node], (int)cores);
    TaskEv e = {until, -1, -1 - node};
    TaskEv_push(&r->theap, e);
}

static void release(Run *r, int node) {
    DVec *u = &r->held_until[node];
    IVec *c = &r->held_cores[node];
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < u->n; i++) {
        if (u->a[i] <= r->now) {
            r->free_cores[node] += c->a[i];
        } else {
            u->a[kept] = u->a[i];
            c->a[kept++] = c->a[i];
        }
    }
    u->n = c->n = kept;
    r->version[node]++;
    r->dirty[node] = 1;
}

/* sim/engine.py's _Run._release_tasks. */
static int release_tasks(Run *r, int group) {
    const Shared *sh = r->sh;
    for (int i = sh->rel_off[group]; i < sh->rel_off[group + 1]; i++) {
        int task = sh->rel_task[i];
        if (--r->parents_left[task] == 0) {
            r->ready[task] = r->now;
            if (r->dynamic) {
                if (ivec_push(&r->batch, task) < 0) return -1;
            } else if (r->missing[task] == 0) {
                r->dirty[r->node_of[task]] = 1;
            }
        }
    }
    if (r->dynamic) return 0;
    for (int i = sh->relf_off[group]; i < sh->relf_off[group + 1]; i++) {
        int f = sh->relf[i];
        for (Py_ssize_t j = 0; j < r->eager[f].n; j++)
            if (start_transfer(r, f, FROM_FS, r->eager[f].a[j]) < 0) return -1;
    }
    return 0;
}

static int finish_task(Run *r, int task) {
    const Shared *sh = r->sh;
    int node = r->node_of[task];
    r->free_cores[node] += sh->cores[task];
    r->free_memory[node] += sh->memory[task];
    r->free_gpus[node] += gpus_on(sh, task, node);
    IVec *run = &r->running[node];
    for (Py_ssize_t i = 0; i < run->n; i++)
        if (run->a[i] == task) { run->a[i] = run->a[--run->n]; break; }
    r->version[node]++;
    r->dirty[node] = 1;
    for (int i = sh->out_off[task]; i < sh->out_off[task + 1]; i++) {
        int f = sh->out[i];
        if (add_present(r, f, node) < 0) return -1;
        IVec *e = &r->eager[f];
        for (Py_ssize_t j = 0; j < e->n; j++)
            if (start_transfer(r, f, node, e->a[j]) < 0) return -1;
    }
    for (int i = sh->ch_off[task]; i < sh->ch_off[task + 1]; i++) {
        int child = sh->ch[i];
        if (--r->parents_left[child] == 0) {
            r->ready[child] = r->now;
            if (r->dynamic) {
                if (ivec_push(&r->batch, child) < 0) return -1;
            } else if (r->missing[child] == 0) {
                r->dirty[r->node_of[child]] = 1;
            }
        }
    }
    return 0;
}

static int finish_transfer(Run *r, int transfer) {
    const Shared *sh = r->sh;
    r->t_end.a[transfer] = r->now;
    int node = r->t_dst.a[transfer], f = r->t_file.a[transfer];
    Py_ssize_t key = (Py_ssize_t)f * sh->nn + node;
    if (add_present(r, f, node) < 0) return -1;
    r->in_flight[key] = -1;
    r->version[node]++;
    for (int w = r->whead[key]; w >= 0; w = r->wp_next.a[w]) {
        int task = r->wp_task.a[w];
        if (--r->missing[task] == 0 && r->parents_left[task] == 0) r->dirty[node] = 1;
    }
    r->whead[key] = -1;
    return 0;
}

static int place_ready(Run *r) {
    const Shared *sh = r->sh;
    IVec batch = r->batch;
    r->batch = r->deciding;
    r->batch.n = 0;
    r->deciding = batch;
    if (batch.n > 1 && r->chooser) {
        chooser_order(r->chooser, r->deciding.a, batch.n);
    } else if (batch.n > 1) {
        PyObject *list = PyList_New(batch.n);
        if (!list) return -1;
        for (Py_ssize_t i = 0; i < batch.n; i++) PyList_SET_ITEM(list, i, PyLong_FromLong(batch.a[i]));
        PyObject *sorted = PyObject_CallOneArg(r->order, list);
        Py_DECREF(list);
        if (!sorted) return -1;
        for (Py_ssize_t i = 0; i < batch.n; i++)
            r->deciding.a[i] = (int)PyLong_AsLong(PyList_GET_ITEM(sorted, i));
        Py_DECREF(sorted);
    }
    for (Py_ssize_t pos = 0; pos < r->deciding.n; pos++) {
        r->position = pos;
        int task = r->deciding.a[pos];
        long node = -1;
        if (r->chooser && task == r->pinned_task) node = r->pinned_node;
        else if (r->chooser && (node = chooser_choose(r->chooser, r, task)) == -2) return -1;
        if (node < 0) { /* no chooser, or only the Python scheduler can tell */
            PyObject *arg = PyLong_FromLong(task);
            PyObject *got = arg ? PyObject_CallOneArg(r->choose, arg) : NULL;
            Py_XDECREF(arg);
            if (!got) return -1;
            node = PyLong_AsLong(got);
            Py_DECREF(got);
            if (node == -1 && PyErr_Occurred()) return -1;
        }
        r->node_of[task] = (int)node;
        if (ivec_push(&r->queues[node], task) < 0) return -1;
        r->version[node]++;
        int missing = 0;
        for (int i = sh->in_off[task]; i < sh->in_off[task + 1]; i++) {
            int f = sh->in[i];
            Py_ssize_t key = (Py_ssize_t)f * sh->nn + node;
            if (r->present[key]) continue;
            missing++;
            int waiting = r->whead[key] >= 0;
            if (add_waiter(r, key, task) < 0) return -1;
            if (waiting) continue;
            int p = sh->producer[f];
            if (start_transfer(r, f, p < 0 ? FROM_FS : r->node_of[p], (int)node) < 0) return -1;
        }
        r->missing[task] = missing;
        if (missing == 0) r->dirty[node] = 1;
    }
    r->deciding.n = 0;
    r->position = 0;
    return 0;
}

static int dispatch(Run *r, int node) {
    const Shared *sh = r->sh;
    IVec *q = &r->queues[node];
    int head = r->heads[node];
    double now = r->now;
    while (head < q->n) {
        int task = q->a[head];
        if (r->parents_left[task] || r->missing[task]) break;
        int cores = sh->cores[task], gpus = gpus_on(sh, task, node);
        if (cores > r->free_cores[node] || sh->memory[task] > r->free_memory[node]) break;
        if (gpus > r->free_gpus[node]) break;
        r->free_cores[node] -= cores;
        r->free_memory[node] -= sh->memory[task];
        r->free_gpus[node] -= gpus;
        double end = now + duration(sh, task, node);
        r->start[task] = now;
        r->end[task] = end;
        if (ivec_push(&r->running[node], task) < 0) return -1;
        TaskEv e = {end, (int64_t)r->started.n, task};
        if (TaskEv_push(&r->theap, e) < 0 || ivec_push(&r->started, task) < 0) return -1;
        head++;
    }
    if (head != r->heads[node]) {
        r->heads[node] = head;
        r->version[node]++;
    }
    return 0;
}

static int settle_instant(Run *r) {
    if (r->batch.n && place_ready(r) < 0) return -1;
    for (int node = 0; node < r->sh->nn; node++) {
        if (!r->dirty[node]) continue;
        r->dirty[node] = 0;
        if (dispatch(r, node) < 0) return -1;
    }
    return net_settle(&r->net, r->now);
}

int run_start_static(Run *r) {
    const Shared *sh = r->sh;
    for (int f = 0; f < sh->nf; f++) {
        if (sh->producer[f] >= 0 || sh->late[f]) continue;
        for (Py_ssize_t j = 0; j < r->eager[f].n; j++)
            if (start_transfer(r, f, FROM_FS, r->eager[f].a[j]) < 0) return -1;
    }
    return 0;
}

/* Finish the current instant, then process events until none is left. */
int run_resume(Run *r) {
    IVec done = {0};
    int rc = -1;
    if (settle_instant(r) < 0) goto out;
    for (;;) {
        double next_task = r->theap.n ? r->theap.a[0].t : INFINITY;
        double next_transfer = net_next_time(&r->net);
        double now = next_task < next_transfer ? next_task : next_transfer;
        if (now == INFINITY) break;
        r->now = now;
        while (r->theap.n && r->theap.a[0].t <= now) {
            int task = TaskEv_pop(&r->theap).task;
            if (task >= 0) {
                if (finish_task(r, task) < 0) goto out;
            } else if (task >= -r->sh->nn) {
                release(r, -1 - task);
            } else if (release_tasks(r, -1 - r->sh->nn - task) < 0) {
                goto out;
            }
        }
        if (net_pop_finished(&r->net, now, &done) < 0) goto out;
        for (Py_ssize_t i = 0; i < done.n; i++)
            if (finish_transfer(r, done.a[i]) < 0) goto out;
        if (settle_instant(r) < 0) goto out;
    }
    rc = 0;
out:
    free(done.a);
    return rc;
}
