/* One-sided service (hccl_one_sided_services.h) and buffer windows
 * (HcclCommRegister). Built without them under -DSTUB_NO_ONESIDED, to test
 * a library that lacks these optional symbols. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"

/* A registration: memory owner registered for peer. It outlives
 * DeregisterMem while accesses to it remain, so they fail with
 * HCCL_E_REMOTE instead of reading freed memory. */
struct reg {
    uint64_t id, group, owner_comm;
    uint32_t owner, peer;
    int type, alive;
    void *addr;
    uint64_t size;
    uint32_t naccess;
    struct reg *next;
};

/* An access a communicator enabled to a registration, counted: each
 * EnableMemAccess of the same descriptor adds one, each DisableMemAccess
 * takes one (hcomm legacy tree, one_sided_service/hccl_one_sided_conn.cc:
 * 259-271, 309-320). */
struct access {
    uint64_t comm;
    struct reg *r;
    uint32_t refs;
    struct access *next;
};

/* A connection: comm exchanged descriptors with peer (the device's
 * one-sided connection, made by HcclExchangeMemDesc:
 * hccl_one_sided_service.cc:430-437). */
struct conn {
    uint64_t comm;
    uint32_t peer;
    struct conn *next;
};

struct win {
    uint64_t id, comm;
    void *addr;
    uint64_t size;
    struct win *next;
};

static struct reg *g_regs;
static struct access *g_access;
static struct win *g_wins;
static struct conn *g_conns;
__attribute__((unused)) static uint64_t g_next_reg = 1, g_next_win = 1;
static long g_live;

long onesided_live(void) { return g_live; }

#define DESC_MAGIC "HCCLSTUBMEMDESC"

struct desc_body {
    char magic[16];
    uint64_t reg, group;
    uint32_t owner, peer;
};

__attribute__((unused)) static void desc_write(HcclMemDesc *d, const struct reg *r)
{
    struct desc_body b;
    memset(d, 0, sizeof *d);
    memset(&b, 0, sizeof b);
    memcpy(b.magic, DESC_MAGIC, 16);
    b.reg = r->id;
    b.group = r->group;
    b.owner = r->owner;
    b.peer = r->peer;
    memcpy(d->desc, &b, sizeof b);
}

__attribute__((unused)) static int desc_read(const HcclMemDesc *d, struct desc_body *b)
{
    memcpy(b, d->desc, sizeof *b);
    return memcmp(b->magic, DESC_MAGIC, 16) == 0;
}

__attribute__((unused)) static struct reg *reg_find(uint64_t id)
{
    for (struct reg *r = g_regs; r != NULL; r = r->next)
        if (r->id == id)
            return r;
    return NULL;
}

static void reg_maybe_free(struct reg *r)
{
    if (r->alive || r->naccess > 0)
        return;
    for (struct reg **p = &g_regs; *p != NULL; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            free(r);
            g_live--;
            return;
        }
    }
}

static void access_remove(struct access **p)
{
    struct access *a = *p;
    *p = a->next;
    a->r->naccess--;
    reg_maybe_free(a->r);
    free(a);
    g_live--;
}

static void offer_unlink(struct group *g, struct offer *o)
{
    for (struct offer **p = &g->offers; *p != NULL; p = &(*p)->next) {
        if (*p == o) {
            *p = o->next;
            free(o->descs);
            free(o);
            g_live--;
            return;
        }
    }
}

void onesided_release_comm(struct comm *c)
{
    for (struct reg *r = g_regs, *next; r != NULL; r = next) {
        next = r->next;
        if (r->owner_comm == c->id && r->alive) {
            r->alive = 0;
            reg_maybe_free(r);
        }
    }
    for (struct access **p = &g_access; *p != NULL;) {
        if ((*p)->comm == c->id)
            access_remove(p);
        else
            p = &(*p)->next;
    }
    for (struct conn **p = &g_conns; *p != NULL;) {
        if ((*p)->comm == c->id) {
            struct conn *k = *p;
            *p = k->next;
            free(k);
            g_live--;
        } else {
            p = &(*p)->next;
        }
    }
    for (struct win **p = &g_wins; *p != NULL;) {
        if ((*p)->comm == c->id) {
            struct win *w = *p;
            *p = w->next;
            free(w);
            g_live--;
        } else {
            p = &(*p)->next;
        }
    }
    for (struct offer *o = c->g->offers, *next; o != NULL; o = next) {
        next = o->next;
        if (o->from == c->rank)
            offer_unlink(c->g, o);
    }
}

#ifndef STUB_NO_ONESIDED

static HcclResult lock_comm(HcclComm comm, struct comm **c)
{
    pthread_mutex_lock(&stub_mu);
    HcclResult rc = comm_get(comm, c);
    if (rc != HCCL_SUCCESS)
        pthread_mutex_unlock(&stub_mu);
    return rc;
}

#define UNLOCK_RETURN(rc)                  \
    do {                                   \
        HcclResult rc_ = (rc);             \
        pthread_mutex_unlock(&stub_mu);    \
        return rc_;                        \
    } while (0)

static int connected(const struct comm *c, uint32_t peer)
{
    for (const struct conn *k = g_conns; k != NULL; k = k->next)
        if (k->comm == c->id && k->peer == peer)
            return 1;
    return 0;
}

/* Registration limits (one_sided_service_adapt.cc:44-45). */
#define ONE_SIDE_DEVICE_MEM_MAX_SIZE (64ull << 30)
#define ONE_SIDE_HOST_MEM_MAX_SIZE (1ull << 40)
#define MAX_DESC_NUM 256 /* one_sided_service_adapt.cc:47 */

/* The checks of one_sided_service_adapt.cc:145-198 in their order; a
 * remote rank out of range fails the service's rank table lookup
 * (hccl_one_sided_service.cc:94, out_of_range: HCCL_E_NOT_FOUND). */
EXPORT HcclResult HcclRegisterMem(HcclComm comm, uint32_t remoteRank, int type, void *addr, uint64_t size,
                                  HcclMemDesc *desc)
{
    struct comm *c;
    HcclResult rc = lock_comm(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (desc == NULL || addr == NULL)
        UNLOCK_RETURN(HCCL_E_PTR);
    if (remoteRank == c->rank) {
        memset(desc, 0, sizeof *desc); /* HCCL: nothing to do for oneself */
        UNLOCK_RETURN(HCCL_SUCCESS);
    }
    if (size == 0 || (type != COMM_MEM_TYPE_DEVICE && type != COMM_MEM_TYPE_HOST) ||
        (type == COMM_MEM_TYPE_DEVICE && size > ONE_SIDE_DEVICE_MEM_MAX_SIZE) ||
        (type == COMM_MEM_TYPE_HOST && size > ONE_SIDE_HOST_MEM_MAX_SIZE))
        UNLOCK_RETURN(HCCL_E_PARA);
    if (remoteRank >= c->g->n)
        UNLOCK_RETURN(HCCL_E_NOT_FOUND);
    struct reg *r = xcalloc(1, sizeof *r);
    r->id = g_next_reg++;
    r->group = c->g->id;
    r->owner_comm = c->id;
    r->owner = c->rank;
    r->peer = remoteRank;
    r->type = type;
    r->alive = 1;
    r->addr = addr;
    r->size = size;
    r->next = g_regs;
    g_regs = r;
    g_live++;
    desc_write(desc, r);
    UNLOCK_RETURN(HCCL_SUCCESS);
}

/* An unknown descriptor: HCCL_E_NOT_FOUND while the communicator has
 * nothing registered, HCCL_E_INTERNAL otherwise
 * (hccl_one_sided_service.cc:232-235, 245-247). */
EXPORT HcclResult HcclDeregisterMem(HcclComm comm, HcclMemDesc *desc)
{
    struct comm *c;
    HcclResult rc = lock_comm(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (desc == NULL)
        UNLOCK_RETURN(HCCL_E_PTR);
    struct desc_body b;
    struct reg *r = desc_read(desc, &b) ? reg_find(b.reg) : NULL;
    if (r == NULL || !r->alive || r->owner_comm != c->id) {
        for (const struct reg *q = g_regs; q != NULL; q = q->next)
            if (q->owner_comm == c->id && q->alive)
                UNLOCK_RETURN(HCCL_E_INTERNAL);
        UNLOCK_RETURN(HCCL_E_NOT_FOUND);
    }
    r->alive = 0;
    reg_maybe_free(r);
    UNLOCK_RETURN(HCCL_SUCCESS);
}

/* post_offer posts this rank's side of the seq-th exchange with peer. */
static struct offer *post_offer(struct group *g, int kind, uint32_t me, uint32_t peer, uint64_t seq,
                                const HcclMemDesc *descs, uint32_t n)
{
    struct offer *o = xcalloc(1, sizeof *o);
    o->kind = kind;
    o->from = me;
    o->to = peer;
    o->seq = seq;
    o->ndesc = n;
    if (n > 0) {
        o->descs = xcalloc(n, sizeof *o->descs);
        memcpy(o->descs, descs, n * sizeof *descs);
    }
    o->next = g->offers;
    g->offers = o;
    g_live++;
    pthread_cond_broadcast(&stub_cv);
    return o;
}

/* await_offer waits for peer's side of the seq-th exchange with me. */
static struct offer *await_offer(struct group *g, int kind, uint32_t peer, uint32_t me, uint64_t seq,
                                 const struct timespec *dl)
{
    for (;;) {
        for (struct offer *o = g->offers; o != NULL; o = o->next)
            if (o->kind == kind && o->from == peer && o->to == me && o->seq == seq)
                return o;
        if (stub_wait(dl) == ETIMEDOUT)
            return NULL;
    }
}

/* The sender sends whatever it is given; the receiver fails with
 * HCCL_E_INTERNAL when a descriptor it received is not addressed to it
 * (transport_mem.cc:128-142). The device does not check the receiving
 * capacity (transport_mem.cc:175-199): it writes actualNum descriptors
 * into the array. The stub stores only what fits and reports the peer's
 * count. */
EXPORT HcclResult HcclExchangeMemDesc(HcclComm comm, uint32_t remoteRank, HcclMemDescs *local, int timeout,
                                      HcclMemDescs *remote, uint32_t *actualNum)
{
    struct comm *c;
    HcclResult rc = lock_comm(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (local == NULL || remote == NULL || actualNum == NULL || (local->arrayLength > 0 && local->array == NULL) ||
        (remote->arrayLength > 0 && remote->array == NULL))
        UNLOCK_RETURN(HCCL_E_PTR);
    /* timeout (s): 0 = HCCL_CONNECT_TIMEOUT, -1 = never, <= -2 is
     * HCCL_E_PARA (one_sided_service_adapt.cc:277-290). The stub waits its
     * own timeout either way. */
    if (timeout <= -2)
        UNLOCK_RETURN(HCCL_E_PARA);
    struct group *g = c->g;
    if (remoteRank == c->rank) {
        *actualNum = 0; /* one_sided_service_adapt.cc:306-312 */
        UNLOCK_RETURN(HCCL_SUCCESS);
    }
    if (remoteRank >= g->n)
        UNLOCK_RETURN(HCCL_E_NOT_FOUND); /* hccl_one_sided_service.cc:273-278 */
    uint64_t seq = g->exseq[c->rank * g->n + remoteRank]++;
    struct offer *mine = post_offer(g, OFFER_MEMDESC, c->rank, remoteRank, seq, local->array, local->arrayLength);
    struct timespec dl = deadline_for(g);
    struct offer *theirs = await_offer(g, OFFER_MEMDESC, remoteRank, c->rank, seq, &dl);
    if (theirs == NULL) {
        offer_unlink(g, mine);
        UNLOCK_RETURN(HCCL_E_TIMEOUT);
    }
    if (!connected(c, remoteRank)) {
        struct conn *k = xcalloc(1, sizeof *k);
        k->comm = c->id;
        k->peer = remoteRank;
        k->next = g_conns;
        g_conns = k;
        g_live++;
    }
    *actualNum = theirs->ndesc;
    for (uint32_t i = 0; i < theirs->ndesc; i++) {
        struct desc_body b;
        if (!desc_read(&theirs->descs[i], &b) || b.group != g->id || b.owner != remoteRank || b.peer != c->rank) {
            rc = HCCL_E_INTERNAL;
            *actualNum = 0;
            break;
        }
        if (i < remote->arrayLength)
            remote->array[i] = theirs->descs[i];
    }
    offer_unlink(g, theirs); /* each offer has exactly one reader */
    UNLOCK_RETURN(rc);
}

/* Bytes no peer produced for this rank, or an owner this rank has no
 * connection to: HCCL_E_INTERNAL (hccl_one_sided_service.cc:455-463,
 * hccl_one_sided_conn.cc:257-258); enabling again counts up. */
EXPORT HcclResult HcclEnableMemAccess(HcclComm comm, HcclMemDesc *remoteMemDesc, CommMem *remoteMem)
{
    struct comm *c;
    HcclResult rc = lock_comm(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (remoteMemDesc == NULL || remoteMem == NULL)
        UNLOCK_RETURN(HCCL_E_PTR);
    struct desc_body b;
    if (!desc_read(remoteMemDesc, &b) || b.group != c->g->id || b.peer != c->rank || b.owner == c->rank ||
        !connected(c, b.owner))
        UNLOCK_RETURN(HCCL_E_INTERNAL);
    struct reg *r = reg_find(b.reg);
    /* Deregistered by its owner: the IPC import fails, HCCL_E_RUNTIME
     * (hcomm legacy hccl_mem.cc:369-378, adapter_rts.cc:1338-1359). */
    if (r == NULL || !r->alive)
        UNLOCK_RETURN(HCCL_E_RUNTIME);
    struct access *a = NULL;
    for (struct access *x = g_access; x != NULL; x = x->next)
        if (x->comm == c->id && x->r == r)
            a = x;
    if (a == NULL) {
        a = xcalloc(1, sizeof *a);
        a->comm = c->id;
        a->r = r;
        a->next = g_access;
        g_access = a;
        r->naccess++;
        g_live++;
    }
    a->refs++;
    remoteMem->type = (CommMemType)r->type;
    remoteMem->addr = r->addr;
    remoteMem->size = r->size;
    UNLOCK_RETURN(HCCL_SUCCESS);
}

/* Not enabled: HCCL_E_INTERNAL (hccl_one_sided_conn.cc:303-304). */
EXPORT HcclResult HcclDisableMemAccess(HcclComm comm, HcclMemDesc *remoteMemDesc)
{
    struct comm *c;
    HcclResult rc = lock_comm(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (remoteMemDesc == NULL)
        UNLOCK_RETURN(HCCL_E_PTR);
    struct desc_body b;
    if (desc_read(remoteMemDesc, &b)) {
        for (struct access **p = &g_access; *p != NULL; p = &(*p)->next) {
            if ((*p)->comm == c->id && (*p)->r->id == b.reg) {
                if (--(*p)->refs == 0)
                    access_remove(p);
                UNLOCK_RETURN(HCCL_SUCCESS);
            }
        }
    }
    UNLOCK_RETURN(HCCL_E_INTERNAL);
}

/* check_remote looks [addr, addr+len) up among the memory of peer that
 * comm enabled, as the device's remote buffer manager does
 * (hccl_one_sided_conn.cc:343-346, 372-375): not inside any of it is
 * HCCL_E_INTERNAL; inside memory its owner has since deregistered, an
 * error completion (HCCL_E_REMOTE). */
static HcclResult check_remote(const struct comm *c, uint32_t peer, uintptr_t addr, uint64_t len)
{
    HcclResult best = HCCL_E_INTERNAL;
    for (const struct access *a = g_access; a != NULL; a = a->next) {
        const struct reg *r = a->r;
        if (a->comm != c->id || r->owner != peer)
            continue;
        uintptr_t lo = (uintptr_t)r->addr;
        if (addr < lo || addr - lo > r->size || len > r->size - (addr - lo))
            continue;
        if (r->alive)
            return HCCL_SUCCESS;
        best = HCCL_E_REMOTE;
    }
    return best;
}

/* batch is HcclBatchGet/HcclBatchPut: HcclBatchParaCheck
 * (one_sided_service_adapt.cc:400-429), the connection
 * (hccl_one_sided_service.cc:537-545: HCCL_E_NOT_FOUND), then the
 * descriptors one by one as the device queues them
 * (hccl_one_sided_conn.cc:357-383): those before a bad one have moved
 * their bytes when the call fails. */
static HcclResult batch(HcclComm comm, uint32_t remoteRank, HcclOneSideOpDesc *desc, uint32_t descNum, int put)
{
    struct comm *c;
    HcclResult rc = lock_comm(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (desc == NULL && descNum > 0)
        UNLOCK_RETURN(HCCL_E_PTR);
    if (descNum == 0)
        UNLOCK_RETURN(HCCL_SUCCESS);
    if (descNum > MAX_DESC_NUM || remoteRank >= c->g->n || remoteRank == c->rank)
        UNLOCK_RETURN(HCCL_E_PARA);
    if (!connected(c, remoteRank))
        UNLOCK_RETURN(HCCL_E_NOT_FOUND);
    for (uint32_t i = 0; i < descNum; i++) {
        const HcclOneSideOpDesc *d = &desc[i];
        size_t es = dt_size(d->dataType);
        if (es == 0 || d->count > UINT64_MAX / es)
            UNLOCK_RETURN(HCCL_E_PARA);
        size_t n = d->count * es;
        rc = check_remote(c, remoteRank, (uintptr_t)d->remoteAddr, n);
        if (rc != HCCL_SUCCESS)
            UNLOCK_RETURN(rc);
        if (n == 0)
            continue;
        if (d->localAddr == NULL)
            UNLOCK_RETURN(HCCL_E_PTR);
        if (put)
            memmove(d->remoteAddr, d->localAddr, n);
        else
            memmove(d->localAddr, d->remoteAddr, n);
    }
    UNLOCK_RETURN(HCCL_SUCCESS);
}

EXPORT HcclResult HcclBatchGet(HcclComm comm, uint32_t remoteRank, HcclOneSideOpDesc *desc, uint32_t descNum,
                               aclrtStream stream)
{
    (void)stream;
    return batch(comm, remoteRank, desc, descNum, 0);
}

EXPORT HcclResult HcclBatchPut(HcclComm comm, uint32_t remoteRank, HcclOneSideOpDesc *desc, uint32_t descNum,
                               aclrtStream stream)
{
    (void)stream;
    return batch(comm, remoteRank, desc, descNum, 1);
}

/* ---- buffer windows ---- */

#define WIN_TAG 0x5u
static void *win_handle(const struct win *w) { return (void *)(uintptr_t)((w->id << 8) | WIN_TAG); }

static struct win **win_find(const struct comm *c, void *handle)
{
    for (struct win **p = &g_wins; *p != NULL; p = &(*p)->next)
        if ((*p)->comm == c->id && win_handle(*p) == handle)
            return p;
    return NULL;
}

/* Buffer windows as the hcomm legacy tree has them: op_base.cc:5673-5722
 * checks the arguments, hccl_communicator_host.cc:9279-9389 (ch) does the
 * work. A3 only (ch:9282,9306,9329); the flag is reserved and ignored. */
EXPORT HcclResult HcclCommRegister(HcclComm comm, void *addr, uint64_t size, void **handle, uint32_t flag)
{
    (void)flag; /* op_base.cc:5673 [[maybe_unused]] */
    struct comm *c;
    HcclResult rc = lock_comm(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (addr == NULL || handle == NULL)
        UNLOCK_RETURN(HCCL_E_PTR);
    if (size == 0)
        UNLOCK_RETURN(HCCL_E_PARA);
    /* ch:9282-9290: not an A3, a window already there (one per
     * communicator), or the CCL buffer already created. */
    if (!c->a3 || c->has_win || c->ccl_buf)
        UNLOCK_RETURN(HCCL_E_NOT_SUPPORT);
    struct win *w = xcalloc(1, sizeof *w);
    w->id = g_next_win++;
    w->comm = c->id;
    w->addr = addr;
    w->size = size;
    w->next = g_wins;
    g_wins = w;
    g_live++;
    c->has_win = 1;
    *handle = win_handle(w);
    UNLOCK_RETURN(HCCL_SUCCESS);
}

/* An unknown handle succeeds (ch:9313-9315, a warning on the device). */
EXPORT HcclResult HcclCommDeregister(HcclComm comm, void *handle)
{
    struct comm *c;
    HcclResult rc = lock_comm(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (handle == NULL)
        UNLOCK_RETURN(HCCL_E_PTR);
    if (!c->a3)
        UNLOCK_RETURN(HCCL_E_NOT_SUPPORT); /* ch:9306-9311 */
    struct win **p = win_find(c, handle);
    if (p == NULL)
        UNLOCK_RETURN(HCCL_SUCCESS);
    struct win *w = *p;
    *p = w->next;
    free(w);
    g_live--;
    c->has_win = 0;
    UNLOCK_RETURN(HCCL_SUCCESS);
}

EXPORT HcclResult HcclCommExchangeMem(HcclComm comm, void *windowHandle, uint32_t *peerRanks, uint32_t peerRankNum)
{
    struct comm *c;
    HcclResult rc = lock_comm(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (windowHandle == NULL || peerRanks == NULL)
        UNLOCK_RETURN(HCCL_E_PTR);
    if (peerRankNum == 0 || peerRankNum > 768) /* MAX_RANK_NUM_A3, op_base.cc:5714-5719 */
        UNLOCK_RETURN(HCCL_E_PARA);
    if (!c->a3)
        UNLOCK_RETURN(HCCL_E_NOT_SUPPORT); /* ch:9329-9335 */
    struct group *g = c->g;
    if (peerRankNum > g->n)
        UNLOCK_RETURN(HCCL_E_PARA); /* ch:9337-9343 */
    if (win_find(c, windowHandle) == NULL)
        UNLOCK_RETURN(HCCL_E_NOT_FOUND); /* ch:9345-9348 */
    /* A peer past the rank table is indexed unchecked on the device
     * (transport_manager.cc:311): refused here. */
    for (uint32_t i = 0; i < peerRankNum; i++)
        if (peerRanks[i] >= g->n)
            UNLOCK_RETURN(HCCL_E_PARA);
    /* Post to every peer first, then collect every peer's offer: any order
     * of peers is deadlock-free. */
    uint64_t *seqs = xcalloc(peerRankNum, sizeof *seqs);
    struct offer **mine = xcalloc(peerRankNum, sizeof *mine);
    /* The caller's own rank in the list is skipped (ch:9358-9369). */
    for (uint32_t i = 0; i < peerRankNum; i++) {
        if (peerRanks[i] == c->rank)
            continue;
        seqs[i] = g->winseq[c->rank * g->n + peerRanks[i]]++;
        mine[i] = post_offer(g, OFFER_WINDOW, c->rank, peerRanks[i], seqs[i], NULL, 0);
    }
    struct timespec dl = deadline_for(g);
    uint32_t got = 0;
    for (; got < peerRankNum; got++) {
        if (peerRanks[got] == c->rank)
            continue;
        struct offer *o = await_offer(g, OFFER_WINDOW, peerRanks[got], c->rank, seqs[got], &dl);
        if (o == NULL)
            break;
        offer_unlink(g, o);
    }
    if (got < peerRankNum) {
        /* Withdraw the offers no peer took. */
        for (uint32_t i = 0; i < peerRankNum; i++)
            for (struct offer *o = g->offers; o != NULL; o = o->next)
                if (o == mine[i]) {
                    offer_unlink(g, o);
                    break;
                }
        rc = HCCL_E_TIMEOUT;
    }
    free(seqs);
    free(mine);
    UNLOCK_RETURN(rc);
}

#endif /* STUB_NO_ONESIDED */
