/* Communicator setup, handles, queries, timeouts and leak counting. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stub.h"

pthread_mutex_t stub_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t stub_cv;
long stub_live;

static int g_timeout_ms = 120000; /* HCCL_CONNECT_TIMEOUT default: 120 s */

/* The SoC of the stub's devices: an Atlas A3 unless a test says otherwise
 * (HcclStubSetSocName), as the fallback's hcclsim.DefaultSocName. */
static char g_soc[64] = "Ascend910_9391";

/* soc_is_a3: the names the device maps to DEV_TYPE_910_93 (hcomm legacy
 * platform/inc/adapter/adapter_hal.h:50-57). */
static int soc_is_a3(const char *s)
{
    static const char *const a3[] = {"Ascend910_9391", "Ascend910_9381", "Ascend910_9392", "Ascend910_9382",
                                     "Ascend910_9372", "Ascend910_9362", "Ascend910_9363"};
    for (size_t i = 0; i < sizeof a3 / sizeof a3[0]; i++)
        if (strcmp(s, a3[i]) == 0)
            return 1;
    return 0;
}

__attribute__((constructor)) static void stub_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&stub_cv, &a);
    pthread_condattr_destroy(&a);
    const char *e = getenv("HCCL_CONNECT_TIMEOUT");
    if (e != NULL && atoi(e) > 0)
        g_timeout_ms = atoi(e) * 1000;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        abort(); /* a test stub: out of host memory is fatal */
    return p;
}

/* Test hooks, not part of HCCL. */
EXPORT void HcclStubSetTimeoutMs(int ms)
{
    pthread_mutex_lock(&stub_mu);
    g_timeout_ms = ms > 0 ? ms : 1;
    pthread_mutex_unlock(&stub_mu);
}

/* HcclStubSetSocName sets the SoC of communicators initialised from now on
 * (NULL: the default A3). */
EXPORT void HcclStubSetSocName(const char *name)
{
    pthread_mutex_lock(&stub_mu);
    snprintf(g_soc, sizeof g_soc, "%s", name != NULL ? name : "Ascend910_9391");
    pthread_mutex_unlock(&stub_mu);
}

/* ExecOp creates the CCL buffer when the communicator has more than one
 * rank (hcomm legacy hccl_communicator_host.cc:4665-4667); a registered
 * window (user memory) excludes it (ch:2296-2306). */
HcclResult ccl_buffer(struct comm *c)
{
    if (c->g->n < 2)
        return HCCL_SUCCESS;
    if (c->has_win)
        return HCCL_E_NOT_SUPPORT;
    c->ccl_buf = 1;
    return HCCL_SUCCESS;
}

EXPORT long HcclStubLive(void)
{
    pthread_mutex_lock(&stub_mu);
    long n = stub_live + onesided_live();
    pthread_mutex_unlock(&stub_mu);
    return n;
}

struct timespec deadline_for(const struct group *g)
{
    int ms = (g != NULL && g->timeout_ms > 0) ? g->timeout_ms : g_timeout_ms;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

int stub_wait(const struct timespec *deadline)
{
    int rc = pthread_cond_timedwait(&stub_cv, &stub_mu, deadline);
    if (rc == ETIMEDOUT)
        return ETIMEDOUT;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec))
        return ETIMEDOUT;
    return 0;
}

size_t dt_size(int dt)
{
    switch (dt) {
    case HCCL_DATA_TYPE_INT8:
    case HCCL_DATA_TYPE_UINT8:
    case HCCL_DATA_TYPE_HIF8:
    case HCCL_DATA_TYPE_FP8E4M3:
    case HCCL_DATA_TYPE_FP8E5M2:
    case HCCL_DATA_TYPE_FP8E8M0:
        return 1;
    case HCCL_DATA_TYPE_INT16:
    case HCCL_DATA_TYPE_UINT16:
    case HCCL_DATA_TYPE_FP16:
    case HCCL_DATA_TYPE_BFP16:
        return 2;
    case HCCL_DATA_TYPE_INT32:
    case HCCL_DATA_TYPE_UINT32:
    case HCCL_DATA_TYPE_FP32:
        return 4;
    case HCCL_DATA_TYPE_INT64:
    case HCCL_DATA_TYPE_UINT64:
    case HCCL_DATA_TYPE_FP64:
        return 8;
    case HCCL_DATA_TYPE_INT128:
        return 16;
    }
    return 0;
}

/* dt_reducible: int8/16/32/64, fp16, bf16, fp32. The unsigned types and fp64
 * are refused (hccl_communicator_host.cc:1002-1006), int128 and the 8-bit
 * floats are not reduced. */
int dt_reducible(int dt)
{
    switch (dt) {
    case HCCL_DATA_TYPE_INT8:
    case HCCL_DATA_TYPE_INT16:
    case HCCL_DATA_TYPE_INT32:
    case HCCL_DATA_TYPE_INT64:
    case HCCL_DATA_TYPE_FP16:
    case HCCL_DATA_TYPE_BFP16:
    case HCCL_DATA_TYPE_FP32:
        return 1;
    }
    return 0;
}

/* ---- handles ---- */

/* Communicators live in a table indexed by id; ids are never reused, so a
 * stale handle can never alias a newer communicator. */
#define COMM_HANDLE_BASE 0x10000u
static struct comm **g_comms;
static uint64_t g_ncomms, g_capcomms;
static uint64_t g_next_group = 1;

static HcclComm comm_handle(const struct comm *c) { return (HcclComm)(uintptr_t)(COMM_HANDLE_BASE + c->id * 16); }

HcclResult comm_get(HcclComm h, struct comm **out)
{
    if (h == NULL)
        return HCCL_E_PTR;
    uintptr_t v = (uintptr_t)h;
    if (v < COMM_HANDLE_BASE || (v - COMM_HANDLE_BASE) % 16 != 0)
        return HCCL_E_PARA;
    uint64_t id = (v - COMM_HANDLE_BASE) / 16;
    if (id == 0 || id > g_ncomms || g_comms[id - 1] == NULL)
        return HCCL_E_PARA;
    *out = g_comms[id - 1];
    return HCCL_SUCCESS;
}

static struct group *group_new(uint32_t n, const char *name, int timeout_ms)
{
    struct group *g = xcalloc(1, sizeof *g);
    g->id = g_next_group++;
    g->n = n;
    g->timeout_ms = timeout_ms;
    if (name != NULL && name[0] != '\0')
        snprintf(g->name, sizeof g->name, "%s", name);
    else
        snprintf(g->name, sizeof g->name, "hccl_stub_group_%llu", (unsigned long long)g->id);
    g->sendseq = xcalloc((size_t)n * n, sizeof(uint64_t));
    g->recvseq = xcalloc((size_t)n * n, sizeof(uint64_t));
    g->exseq = xcalloc((size_t)n * n, sizeof(uint64_t));
    g->winseq = xcalloc((size_t)n * n, sizeof(uint64_t));
    stub_live++;
    return g;
}

static struct comm *comm_new(struct group *g, uint32_t rank)
{
    struct comm *c = xcalloc(1, sizeof *c);
    if (g_ncomms == g_capcomms) {
        g_capcomms = g_capcomms ? 2 * g_capcomms : 64;
        g_comms = realloc(g_comms, g_capcomms * sizeof *g_comms);
        if (g_comms == NULL)
            abort();
    }
    g_comms[g_ncomms++] = c;
    c->id = g_ncomms;
    c->g = g;
    c->rank = rank;
    c->a3 = soc_is_a3(g_soc);
    g->refs++;
    stub_live++;
    return c;
}

/* ---- rendezvous: root info and rank tables ---- */

#define ROOT_MAGIC "HCCLSTUBROOTINFO"

struct rdv {
    uint64_t id;
    char *key; /* rank table path, or NULL for a root info */
    uint32_t n, joined;
    struct comm **slots; /* filled when the group forms */
    int *present;
    int formed_pending;  /* members still to pick up their comm */
    int aborted;         /* a root info's initialisation was aborted */
    char name[COMM_NAME_MAX_LENGTH];
    int timeout_ms;
    struct rdv *next;
};

static struct rdv *g_rdvs;
static uint64_t g_next_rdv = 1;

static struct rdv *rdv_new(const char *key)
{
    struct rdv *r = xcalloc(1, sizeof *r);
    r->id = g_next_rdv++;
    if (key != NULL)
        r->key = strdup(key);
    r->next = g_rdvs;
    g_rdvs = r;
    return r;
}

static void rdv_reset(struct rdv *r)
{
    free(r->slots);
    free(r->present);
    r->slots = NULL;
    r->present = NULL;
    r->n = r->joined = 0;
    r->name[0] = '\0';
    r->timeout_ms = 0;
}

static void rdv_free(struct rdv *r)
{
    for (struct rdv **p = &g_rdvs; *p != NULL; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            break;
        }
    }
    rdv_reset(r);
    free(r->key);
    free(r);
}

/* Join rank of an n-rank communicator at r; blocks until all joined or the
 * timeout. Call with stub_mu held. */
static HcclResult rdv_join(struct rdv *r, uint32_t n, uint32_t rank, const char *name, int timeout_ms, HcclComm *out)
{
    if (r->formed_pending)
        return HCCL_E_PARA; /* already used to form a communicator */
    if (r->aborted)
        return HCCL_E_INTERNAL;
    if (r->joined > 0 && (r->n != n || r->present[rank])) {
        if (r->key != NULL)
            return HCCL_E_PARA;
        /* A root info: its server aborts the initialisation when an agent
         * id is already connected or the rank counts differ (hcomm legacy
         * topoinfo_exchange_server.cc:490-496, 640-652); the root's init
         * reports HCCL_E_INTERNAL (topoinfo_detect.cc:458-460) and the
         * others fail on the sockets the server closes (:132-135). */
        r->aborted = 1;
        pthread_cond_broadcast(&stub_cv);
        return HCCL_E_INTERNAL;
    }
    if (r->joined == 0) {
        r->n = n;
        r->slots = xcalloc(n, sizeof *r->slots);
        r->present = xcalloc(n, sizeof *r->present);
    }
    r->present[rank] = 1;
    r->joined++;
    if (name != NULL && name[0] != '\0' && r->name[0] == '\0')
        snprintf(r->name, sizeof r->name, "%s", name);
    if (timeout_ms > 0 && r->timeout_ms == 0)
        r->timeout_ms = timeout_ms;

    if (r->joined == n) {
        struct group *g = group_new(n, r->name, r->timeout_ms);
        for (uint32_t i = 0; i < n; i++)
            r->slots[i] = comm_new(g, i);
        r->formed_pending = (int)n;
        pthread_cond_broadcast(&stub_cv);
    } else {
        struct group tmp = {.timeout_ms = timeout_ms};
        struct timespec dl = deadline_for(&tmp);
        while (!r->formed_pending) {
            if (r->aborted) {
                r->present[rank] = 0;
                if (--r->joined == 0)
                    rdv_free(r); /* the aborted root info is dead */
                return HCCL_E_INTERNAL;
            }
            if (stub_wait(&dl) == ETIMEDOUT && !r->formed_pending && !r->aborted) {
                r->present[rank] = 0;
                if (--r->joined == 0) {
                    if (r->key != NULL)
                        rdv_free(r);
                    else
                        rdv_reset(r);
                }
                return HCCL_E_TIMEOUT;
            }
        }
    }
    *out = comm_handle(r->slots[rank]);
    if (--r->formed_pending == 0)
        rdv_free(r); /* a root info forms one communicator only */
    return HCCL_SUCCESS;
}

EXPORT HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)
{
    if (rootInfo == NULL)
        return HCCL_E_PTR;
    pthread_mutex_lock(&stub_mu);
    struct rdv *r = rdv_new(NULL);
    memset(rootInfo, 0, sizeof *rootInfo);
    memcpy(rootInfo->internal, ROOT_MAGIC, 16);
    uint64_t pid = (uint64_t)getpid();
    memcpy(rootInfo->internal + 16, &pid, 8);
    memcpy(rootInfo->internal + 24, &r->id, 8);
    pthread_mutex_unlock(&stub_mu);
    return HCCL_SUCCESS;
}

static struct rdv *rdv_by_root(const HcclRootInfo *ri)
{
    if (memcmp(ri->internal, ROOT_MAGIC, 16) != 0)
        return NULL;
    uint64_t pid, id;
    memcpy(&pid, ri->internal + 16, 8);
    memcpy(&id, ri->internal + 24, 8);
    if (pid != (uint64_t)getpid())
        return NULL;
    for (struct rdv *r = g_rdvs; r != NULL; r = r->next)
        if (r->id == id && r->key == NULL)
            return r;
    return NULL;
}

/* config_read checks the versioned header and picks the fields the stub
 * uses: the name and the execution timeout. */
static HcclResult config_read(const HcclCommConfig *cfg, char *name, int *timeout_ms)
{
    size_t size;
    uint32_t magic, version;
    memcpy(&size, cfg->reserved, sizeof size);
    memcpy(&magic, cfg->reserved + 8, 4);
    memcpy(&version, cfg->reserved + 12, 4);
    if (magic != HCCL_COMM_CONFIG_MAGIC_WORD || version == 0)
        return HCCL_E_PARA;
    if (size < offsetof(HcclCommConfig, hcclUdi))
        return HCCL_E_PARA;
    if (memchr(cfg->hcclCommName, 0, COMM_NAME_MAX_LENGTH) == NULL)
        return HCCL_E_PARA;
    /* hcclBufferSize below 1 MB (HCCL_CCL_COMM_BUFFER_MIN); not set
     * follows HCCL_BUFFSIZE (hcomm legacy comm_config.cc:247-270). */
    if (cfg->hcclBufferSize != HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET && cfg->hcclBufferSize < 1)
        return HCCL_E_PARA;
    snprintf(name, COMM_NAME_MAX_LENGTH, "%s", cfg->hcclCommName);
    if (size >= offsetof(HcclCommConfig, hcclAlgo) && cfg->hcclExecTimeOut > 0)
        *timeout_ms = cfg->hcclExecTimeOut * 1000;
    return HCCL_SUCCESS;
}

static HcclResult init_root(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, const HcclCommConfig *config,
                            int use_config, HcclComm *comm)
{
    if (rootInfo == NULL || comm == NULL || (use_config && config == NULL))
        return HCCL_E_PTR;
    if (nRanks == 0 || rank >= nRanks)
        return HCCL_E_PARA;
    char name[COMM_NAME_MAX_LENGTH] = "";
    int timeout_ms = 0;
    if (use_config) {
        HcclResult rc = config_read(config, name, &timeout_ms);
        if (rc != HCCL_SUCCESS)
            return rc;
    }
    pthread_mutex_lock(&stub_mu);
    struct rdv *r = rdv_by_root(rootInfo);
    HcclResult rc = r == NULL ? HCCL_E_PARA : rdv_join(r, nRanks, rank, name, timeout_ms, comm);
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

EXPORT HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, HcclComm *comm)
{
    return init_root(nRanks, rootInfo, rank, NULL, 0, comm);
}

EXPORT HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                             const HcclCommConfig *config, HcclComm *comm)
{
    return init_root(nRanks, rootInfo, rank, config, 1, comm);
}

/* Rank tables: ranktable.c reads and checks them as HCCL does. */
HcclResult stub_ranktable_load(const char *path, uint32_t rank, uint32_t *n);

static HcclResult init_cluster(const char *clusterInfo, uint32_t rank, const HcclCommConfig *config, int use_config,
                               HcclComm *comm)
{
    if (clusterInfo == NULL || comm == NULL || (use_config && config == NULL))
        return HCCL_E_PTR;
    uint32_t n = 0;
    HcclResult rc = stub_ranktable_load(clusterInfo, rank, &n);
    if (rc != HCCL_SUCCESS)
        return rc;
    char name[COMM_NAME_MAX_LENGTH] = "";
    int timeout_ms = 0;
    if (use_config && (rc = config_read(config, name, &timeout_ms)) != HCCL_SUCCESS)
        return rc;
    char *key = realpath(clusterInfo, NULL);
    if (key == NULL)
        return HCCL_E_PARA;
    pthread_mutex_lock(&stub_mu);
    struct rdv *r = NULL;
    for (struct rdv *x = g_rdvs; x != NULL; x = x->next)
        if (x->key != NULL && strcmp(x->key, key) == 0 && !x->formed_pending)
            r = x;
    if (r == NULL)
        r = rdv_new(key);
    rc = rdv_join(r, n, rank, name, timeout_ms, comm);
    pthread_mutex_unlock(&stub_mu);
    free(key);
    return rc;
}

EXPORT HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm)
{
    return init_cluster(clusterInfo, rank, NULL, 0, comm);
}

EXPORT HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank, HcclCommConfig *config,
                                                HcclComm *comm)
{
    return init_cluster(clusterInfo, rank, config, 1, comm);
}

EXPORT HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms)
{
    if (ndev == 0)
        return HCCL_E_PARA;
    if (devices == NULL || comms == NULL)
        return HCCL_E_PTR;
    for (uint32_t i = 0; i < ndev; i++) {
        if (devices[i] < 0)
            return HCCL_E_PARA;
        for (uint32_t j = 0; j < i; j++)
            if (devices[j] == devices[i])
                return HCCL_E_PARA;
    }
    pthread_mutex_lock(&stub_mu);
    struct group *g = group_new(ndev, NULL, 0);
    snprintf(g->name, sizeof g->name, "hccl_stub_all_%llu", (unsigned long long)g->id);
    for (uint32_t i = 0; i < ndev; i++)
        comms[i] = comm_handle(comm_new(g, i));
    pthread_mutex_unlock(&stub_mu);
    return HCCL_SUCCESS;
}

static void group_release(struct group *g)
{
    group_free_ops(g);
    free(g->sendseq);
    free(g->recvseq);
    free(g->exseq);
    free(g->winseq);
    free(g);
    stub_live--;
}

EXPORT HcclResult HcclCommDestroy(HcclComm comm)
{
    if (comm == NULL)
        return HCCL_SUCCESS; /* op_base.cc:3656: an empty comm is skipped */
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    if (rc == HCCL_SUCCESS) {
        onesided_release_comm(c);
        g_comms[c->id - 1] = NULL;
        struct group *g = c->g;
        free(c);
        stub_live--;
        if (--g->refs == 0)
            group_release(g);
        pthread_cond_broadcast(&stub_cv);
    }
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

EXPORT HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize)
{
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    if (rc == HCCL_SUCCESS && rankSize == NULL)
        rc = HCCL_E_PTR;
    if (rc == HCCL_SUCCESS)
        *rankSize = c->g->n;
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

EXPORT HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank)
{
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    if (rc == HCCL_SUCCESS && rank == NULL)
        rc = HCCL_E_PTR;
    if (rc == HCCL_SUCCESS)
        *rank = c->rank;
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

EXPORT HcclResult HcclGetCommName(HcclComm comm, char *commName)
{
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    if (rc == HCCL_SUCCESS && commName == NULL)
        rc = HCCL_E_PTR;
    if (rc == HCCL_SUCCESS)
        snprintf(commName, COMM_NAME_MAX_LENGTH, "%s", c->g->name);
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

EXPORT HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError)
{
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    if (rc == HCCL_SUCCESS && asyncError == NULL)
        rc = HCCL_E_PTR;
    if (rc == HCCL_SUCCESS)
        *asyncError = c->async_err; /* stream.c: HCCL_E_PARA for a later disagreement with inconsistent_check:on */
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

EXPORT const char *HcclGetErrorString(HcclResult code)
{
    switch (code) {
    case HCCL_SUCCESS: return "success";
    case HCCL_E_PARA: return "parameter error";
    case HCCL_E_PTR: return "empty pointer";
    case HCCL_E_MEMORY: return "memory error";
    case HCCL_E_INTERNAL: return "internal error";
    case HCCL_E_NOT_SUPPORT: return "not support feature";
    case HCCL_E_NOT_FOUND: return "not found specific resource";
    case HCCL_E_UNAVAIL: return "resource unavailable";
    case HCCL_E_SYSCALL: return "call system interface error";
    case HCCL_E_TIMEOUT: return "timeout";
    case HCCL_E_REMOTE: return "error cqe";
    case HCCL_E_OOM: return "out of memory";
    default: return "unknown error";
    }
}
