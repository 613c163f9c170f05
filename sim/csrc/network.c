/* Bandwidth sharing, as sim/network.py: FairNetwork (max-min fair flows over full-duplex NICs
 * and the shared filesystem link, grouped per (uplink, downlink) pair with "bytes served per
 * flow") and IdealNetwork (no contention). Same events, same arithmetic, same order. */
#include "core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ACTIVATE 0
#define FINISH 1

int net_init(Net *n, const Shared *sh, int fair) {
    memset(n, 0, sizeof(*n));
    n->fair = fair;
    n->latency = sh->latency;
    n->nres = 2 * sh->nn + 1;
    n->width = n->nres;
    int R = n->nres;
    n->capacity = malloc(sizeof(double) * R);
    n->cap_left = calloc(R, sizeof(double));
    n->active = calloc(R, sizeof(int));
    n->unfrozen = calloc(R, sizeof(int));
    n->on = calloc(R, sizeof(IVec));
    n->gid = malloc(sizeof(int) * (size_t)R * R);
    if (!n->capacity || !n->cap_left || !n->active || !n->unfrozen || !n->on || !n->gid) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < sh->nn; i++) n->capacity[i] = n->capacity[sh->nn + i] = sh->bw[i];
    n->capacity[2 * sh->nn] = sh->fs_bw;
    for (Py_ssize_t k = 0; k < (Py_ssize_t)R * R; k++) n->gid[k] = -1;
    return 0;
}

void net_free(Net *n) {
    for (int g = 0; g < n->ngroups; g++) free(n->groups[g].targets.a);
    for (int r = 0; n->on && r < n->nres; r++) free(n->on[r].a);
    free(n->groups); free(n->gid); free(n->on); free(n->act.a);
    free(n->capacity); free(n->cap_left); free(n->active); free(n->unfrozen);
    free(n->p_up.a); free(n->p_down.a); free(n->p_size.a); free(n->heap.a);
    free(n->new_rate); free(n->rated);
    memset(n, 0, sizeof(*n));
}

int net_copy(Net *d, const Net *s) {
    int R = s->nres;
    *d = *s;
    d->capacity = malloc(sizeof(double) * R);
    d->cap_left = malloc(sizeof(double) * R);
    d->active = malloc(sizeof(int) * R);
    d->unfrozen = malloc(sizeof(int) * R);
    d->on = calloc(R, sizeof(IVec));
    d->gid = malloc(sizeof(int) * (size_t)R * R);
    d->groups = malloc(sizeof(Group) * (size_t)(s->gcap ? s->gcap : 1));
    d->new_rate = malloc(sizeof(double) * (size_t)(s->gcap ? s->gcap : 1));
    d->rated = calloc((size_t)(s->gcap ? s->gcap : 1), sizeof(int64_t));
    if (!d->capacity || !d->cap_left || !d->active || !d->unfrozen || !d->on || !d->gid ||
        !d->groups || !d->new_rate || !d->rated) {
        PyErr_NoMemory();
        return -1;
    }
    d->stamp = 0;
    memcpy(d->capacity, s->capacity, sizeof(double) * R);
    memcpy(d->cap_left, s->cap_left, sizeof(double) * R);
    memcpy(d->active, s->active, sizeof(int) * R);
    memcpy(d->unfrozen, s->unfrozen, sizeof(int) * R);
    memcpy(d->gid, s->gid, sizeof(int) * (size_t)R * R);
    for (int r = 0; r < R; r++)
        if (ivec_copy(&d->on[r], &s->on[r]) < 0) return -1;
    for (int g = 0; g < s->ngroups; g++) {
        d->groups[g] = s->groups[g];
        if (Target_copy(&d->groups[g].targets, &s->groups[g].targets) < 0) return -1;
    }
    if (ivec_copy(&d->act, &s->act) < 0 || ivec_copy(&d->p_up, &s->p_up) < 0 ||
        ivec_copy(&d->p_down, &s->p_down) < 0 || dvec_copy(&d->p_size, &s->p_size) < 0 ||
        NetEv_copy(&d->heap, &s->heap) < 0)
        return -1;
    return 0;
}

int net_start(Net *n, const Shared *sh, int transfer, double size, int source, int dst,
              double now) {
    if (!n->fair) {
        int row = source == FROM_FS ? sh->nn : source;
        double end = now + (sh->latency + size / sh->link[(Py_ssize_t)row * sh->nn + dst]);
        NetEv e = {end, transfer, FINISH, transfer, 0};
        return NetEv_push(&n->heap, e);
    }
    int up = source == FROM_FS ? 2 * sh->nn : source;
    if (ivec_push(&n->p_up, up) < 0 || ivec_push(&n->p_down, sh->nn + dst) < 0 ||
        dvec_push(&n->p_size, size) < 0)
        return -1;
    (void)transfer; /* dense ids: transfer == its index in p_up */
    n->seq++;
    NetEv e = {now + n->latency, n->seq, ACTIVATE, transfer, 0};
    return NetEv_push(&n->heap, e);
}

double net_next_time(Net *n) {
    while (n->heap.n) {
        NetEv *e = &n->heap.a[0];
        if (n->fair && e->kind == FINISH && n->groups[e->key].version != e->version) {
            NetEv_pop(&n->heap); /* superseded by a later rate change */
            continue;
        }
        return e->t;
    }
    return INFINITY;
}

static void advance(Group *g, double now) {
    g->served += g->rate * (now - g->last);
    g->last = now;
}

static void on_remove(IVec *v, Group *groups, int g, int which) {
    int pos = which == 0 ? groups[g].pos_up : which == 1 ? groups[g].pos_down
                                                          : groups[g].pos_active;
    int last = v->a[--v->n];
    if (last != g) {
        v->a[pos] = last;
        Group *l = &groups[last];
        if (which == 0) l->pos_up = pos;
        else if (which == 1) l->pos_down = pos;
        else l->pos_active = pos;
    }
}

static int join(Net *n, int transfer, int up, int down, double size, double now, int *out) {
    int key = up * n->width + down;
    int g = n->gid[key];
    if (g < 0) {
        if (n->ngroups == n->gcap) {
            int cap = n->gcap ? 2 * n->gcap : 16;
            Group *p = realloc(n->groups, sizeof(Group) * cap);
            double *nr = realloc(n->new_rate, sizeof(double) * cap);
            int64_t *rt = realloc(n->rated, sizeof(int64_t) * cap);
            if (p) n->groups = p;
            if (nr) n->new_rate = nr;
            if (rt) n->rated = rt;
            if (!p || !nr || !rt) { PyErr_NoMemory(); return -1; }
            memset(n->rated + n->gcap, 0, sizeof(int64_t) * (cap - n->gcap));
            n->gcap = cap;
        }
        g = n->gid[key] = n->ngroups++;
        Group *G = &n->groups[g];
        memset(G, 0, sizeof(*G));
        G->up = up; G->down = down;
        G->pos_up = G->pos_down = G->pos_active = -1;
    }
    Group *G = &n->groups[g];
    advance(G, now);
    Target t = {G->served + size, transfer};
    if (Target_push(&G->targets, t) < 0) return -1;
    if (G->count == 0) {
        G->pos_up = (int)n->on[up].n;
        G->pos_down = (int)n->on[down].n;
        G->pos_active = (int)n->act.n;
        if (ivec_push(&n->on[up], g) < 0 || ivec_push(&n->on[down], g) < 0 ||
            ivec_push(&n->act, g) < 0)
            return -1;
    }
    G->count++;
    n->active[up]++;
    n->active[down]++;
    *out = g;
    return 0;
}

int net_pop_finished(Net *n, double now, IVec *done) {
    done->n = 0;
    while (net_next_time(n) <= now) {
        NetEv e = NetEv_pop(&n->heap);
        if (!n->fair) {
            if (ivec_push(done, e.key) < 0) return -1;
            continue;
        }
        if (e.kind == ACTIVATE) {
            double size = n->p_size.a[e.key];
            if (size <= 0) {
                if (ivec_push(done, e.key) < 0) return -1;
                continue;
            }
            int g;
            if (join(n, e.key, n->p_up.a[e.key], n->p_down.a[e.key], size, now, &g) < 0) return -1;
        } else {
            Group *G = &n->groups[e.key];
            advance(G, now);
            double reached = G->targets.a[0].target;
            while (G->targets.n && G->targets.a[0].target <= reached) {
                if (ivec_push(done, Target_pop(&G->targets).transfer) < 0) return -1;
                G->count--;
                n->active[G->up]--;
                n->active[G->down]--;
            }
            G->served = reached; /* snap: no drift from repeated rate updates */
            if (G->count == 0) {
                on_remove(&n->on[G->up], n->groups, e.key, 0);
                on_remove(&n->on[G->down], n->groups, e.key, 1);
                on_remove(&n->act, n->groups, e.key, 2);
                G->rate = 0.0;
                G->version++;
            }
        }
        n->dirty = 1;
    }
    return 0;
}

/* Max-min fair rate of every active group (progressive filling), into new_rate. */
static int filling(Net *n) {
    ShareHeap heap = {0};
    IVec touched = {0};
    double *cap_left = n->cap_left;
    int *unfrozen = n->unfrozen;
    n->stamp++;
    for (int r = 0; r < n->nres; r++) {
        int count = n->active[r];
        if (count) {
            cap_left[r] = n->capacity[r];
            unfrozen[r] = count;
            Share s = {n->capacity[r] / count, r};
            if (Share_push(&heap, s) < 0) return -1;
        }
    }
    while (heap.n) {
        Share top = Share_pop(&heap);
        int r = top.r, count = unfrozen[r];
        if (count == 0 || top.share != cap_left[r] / count) continue; /* stale */
        unfrozen[r] = 0;
        IVec *on = &n->on[r];
        touched.n = 0;
        for (Py_ssize_t i = 0; i < on->n; i++) {
            int g = on->a[i];
            if (n->rated[g] == n->stamp) continue;
            Group *G = &n->groups[g];
            n->rated[g] = n->stamp;
            n->new_rate[g] = top.share;
            int other = G->up == r ? G->down : G->up;
            double left = cap_left[other] - top.share * (double)G->count;
            cap_left[other] = left > 0.0 ? left : 0.0;
            unfrozen[other] -= G->count;
            if (ivec_push(&touched, other) < 0) return -1;
        }
        for (Py_ssize_t i = 0; i < touched.n; i++) {
            int other = touched.a[i];
            if (unfrozen[other]) {
                Share s = {cap_left[other] / unfrozen[other], other};
                if (Share_push(&heap, s) < 0) return -1;
            }
        }
    }
    free(touched.a);
    free(heap.a);
    return 0;
}

int net_settle(Net *n, double now) {
    if (!n->fair || !n->dirty) return 0;
    n->dirty = 0;
    if (filling(n) < 0) return -1;
    for (Py_ssize_t i = 0; i < n->act.n; i++) {
        int g = n->act.a[i];
        Group *G = &n->groups[g];
        double r = n->new_rate[g];
        if (r == G->rate) continue;
        advance(G, now);
        G->rate = r;
        G->version++;
        n->seq++;
        NetEv e = {now + (G->targets.a[0].target - G->served) / r, n->seq, FINISH, g, G->version};
        if (NetEv_push(&n->heap, e) < 0) return -1;
    }
    return 0;
}
