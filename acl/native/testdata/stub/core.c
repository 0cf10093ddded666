/* Stub libascendcl, core: init state, devices, contexts, per-thread error
 * messages, the call counter and fault injection. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stub.h"

pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_cv;
int g_state;
int g_inited;              /* between aclInit and aclFinalize */
static int g_finalized;    /* aclFinalize ran (acl.cpp aclFinalizeFlag) */
static char *g_init_config; /* content of the first aclInit's config */
int g_ndev;
device *g_dev;
table g_ctxs, g_streams, g_events, g_gates;

static int g_cfg_ndev = 2;
static uint64_t g_cfg_cap = 256ull << 20;

static uint64_t g_calls;     /* every exported ACL call */
static uint64_t g_countdown; /* the countdown-th eligible call fails */
static int g_fail_code;

static uint64_t g_leaked[7]; /* resources released implicitly, by kind */

static __thread char tls_msg[512];
static __thread int tls_has_msg;
static __thread uintptr_t tls_ctx;

__attribute__((constructor)) static void stub_init_cv(void) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cv, &a);
    pthread_condattr_destroy(&a);
}

/* ---- calls, faults, messages ---- */

int stub_enter(void) {
    __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED);
    uint64_t c = __atomic_load_n(&g_countdown, __ATOMIC_ACQUIRE);
    while (c != 0) {
        if (__atomic_compare_exchange_n(&g_countdown, &c, c - 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return c == 1;
    }
    return 0;
}

aclError stub_injected(const char *fn) {
    int code = __atomic_load_n(&g_fail_code, __ATOMIC_ACQUIRE);
    return stub_fail(code, fn, "injected failure (stub_fail_call)");
}

aclError stub_fail(aclError code, const char *fn, const char *fmt, ...) {
    int n = snprintf(tls_msg, sizeof tls_msg, "[stub] %s: ", fn);
    if (n < 0 || (size_t)n >= sizeof tls_msg) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_msg + n, sizeof tls_msg - (size_t)n, fmt, ap);
    va_end(ap);
    tls_has_msg = 1;
    return code;
}

STUB_API const char *aclGetRecentErrMsg(void) {
    __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED);
    if (!tls_has_msg) return NULL;
    tls_has_msg = 0; /* each message is reported once, as in ACL */
    return tls_msg;
}

STUB_API uint64_t stub_call_count(void) { return __atomic_load_n(&g_calls, __ATOMIC_RELAXED); }

STUB_API void stub_reset(void) {
    pthread_mutex_lock(&g_mu);
    memset(g_leaked, 0, sizeof g_leaked);
    pthread_mutex_unlock(&g_mu);
    __atomic_store_n(&g_calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_countdown, 0, __ATOMIC_RELEASE);
}

/* stub_fail_call makes the k-th ACL call from now (k >= 1; 0 cancels) fail
 * with code, without any other effect. aclGetRecentErrMsg is not counted. */
STUB_API void stub_fail_call(uint64_t k, aclError code) {
    __atomic_store_n(&g_fail_code, code, __ATOMIC_RELEASE);
    __atomic_store_n(&g_countdown, k, __ATOMIC_RELEASE);
}

/* stub_configure sets the device count and the memory of each device; it
 * takes effect at the next aclInit. */
STUB_API aclError stub_configure(int32_t devices, uint64_t bytes_per_device) {
    if (devices < 1 || devices > 64 || bytes_per_device < 4096) return ACL_ERROR_INVALID_PARAM;
    pthread_mutex_lock(&g_mu);
    g_cfg_ndev = devices;
    g_cfg_cap = bytes_per_device;
    pthread_mutex_unlock(&g_mu);
    return ACL_SUCCESS;
}

/* stub_live counts live resources: 0 device allocations, 1 MallocHost
 * blocks, 2 host registrations, 3 streams (not the default ones), 4 events,
 * 5 contexts created by aclrtCreateContext, 6 loaded models. */
STUB_API uint64_t stub_live(int kind) {
    uint64_t n = 0;
    pthread_mutex_lock(&g_mu);
    if (kind <= 2) {
        n = mem_live(kind);
    } else if (kind == 3) {
        for (size_t i = 0; i < g_streams.n; i++) {
            stub_stream *s = g_streams.slot[i];
            n += s && s->alive && !s->is_default;
        }
    } else if (kind == 4) {
        for (size_t i = 0; i < g_events.n; i++) {
            stub_event *e = g_events.slot[i];
            n += e && e->alive;
        }
    } else if (kind == 6) {
        n = model_live();
    } else if (kind == 5) {
        for (size_t i = 0; i < g_ctxs.n; i++) {
            stub_ctx *c = g_ctxs.slot[i];
            n += c && c->alive && !c->is_default;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return n;
}

/* stub_leaked counts, by the kinds of stub_live, the resources that
 * aclrtResetDevice, aclrtDestroyContext or aclFinalize had to release
 * because the program had not, since the library was loaded or stub_reset. */
STUB_API uint64_t stub_leaked(int kind) {
    if (kind < 0 || kind > 6) return 0;
    pthread_mutex_lock(&g_mu);
    uint64_t n = g_leaked[kind];
    pthread_mutex_unlock(&g_mu);
    return n;
}

void note_leaks(int kind, uint64_t n) { g_leaked[kind] += n; }

/* ---- handle tables ---- */

uintptr_t table_add(table *t, uintptr_t base, void *obj) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        void **s = realloc(t->slot, cap * sizeof *s);
        if (!s) return 0;
        t->slot = s;
        t->cap = cap;
    }
    t->slot[t->n] = obj;
    t->n++;
    return base + (uintptr_t)t->n * HANDLE_STEP;
}

void *table_get(table *t, uintptr_t base, uintptr_t h) {
    if (h <= base || (h - base) % HANDLE_STEP != 0) return NULL;
    size_t i = (h - base) / HANDLE_STEP - 1;
    return i < t->n ? t->slot[i] : NULL;
}

static void table_free_all(table *t) {
    for (size_t i = 0; i < t->n; i++) {
        free(t->slot[i]);
        t->slot[i] = NULL; /* indices are never reused */
    }
}

/* ---- init state and contexts ---- */

/* need_init sets the runtime up on first use: the runtime makes no aclInit
 * check of its own (hicann/runtime @681ef76: ACL_ERROR_UNINITIALIZE only in
 * src/acl/toolchain/dump.cpp), so calls before aclInit and after
 * aclFinalize proceed. */
aclError need_init(const char *fn) {
    if (g_state == 1) return ACL_SUCCESS;
    if (mem_map_devices(g_cfg_ndev, g_cfg_cap) != 0)
        return stub_fail(ACL_ERROR_FAILURE, fn, "cannot map device memory: %s", strerror(errno));
    device *d = calloc((size_t)g_cfg_ndev, sizeof *d);
    if (!d) return stub_fail(ACL_ERROR_BAD_ALLOC, fn, "out of host memory");
    free(g_dev);
    g_dev = d;
    g_ndev = g_cfg_ndev;
    g_state = 1;
    return ACL_SUCCESS;
}

/* need_ge refuses the model API while aclInit has not initialised the model
 * executor (hicann/ge runtime/v1/executor/ge_executor.cc:1173-1177). */
aclError need_ge(const char *fn) {
    if (!g_inited)
        return stub_fail(ACL_ERROR_GE_EXEC_NOT_INIT, fn, "aclInit has not been called: the model executor is not initialised");
    return need_init(fn);
}

aclError need_ge_ctx(const char *fn, stub_ctx **out) {
    aclError r = need_ge(fn);
    return r ? r : need_ctx(fn, out);
}

stub_ctx *current_ctx(void) {
    stub_ctx *c = table_get(&g_ctxs, CTX_BASE, tls_ctx);
    return c && c->alive ? c : NULL;
}

void set_current_ctx(stub_ctx *c) { tls_ctx = c ? c->handle : 0; }

aclError need_ctx(const char *fn, stub_ctx **out) {
    *out = current_ctx();
    if (!*out) return stub_fail(ACL_ERROR_RT_CONTEXT_NULL, fn, "no current context on this thread");
    return ACL_SUCCESS;
}

aclError need_init_ctx(const char *fn, stub_ctx **out) {
    aclError r = need_init(fn);
    return r ? r : need_ctx(fn, out);
}

static stub_ctx *new_ctx(int dev, int is_default) {
    stub_ctx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->device = dev;
    c->alive = 1;
    c->is_default = is_default;
    c->handle = table_add(&g_ctxs, CTX_BASE, c);
    if (!c->handle) {
        free(c);
        return NULL;
    }
    c->defstream = new_stream(c, 1);
    if (!c->defstream) {
        c->alive = 0;
        return NULL;
    }
    return c;
}

/* kill_ctx releases a context with its streams and events; implicit says
 * the context itself was left by the program (a device reset). */
static void kill_ctx(stub_ctx *c, int implicit) {
    for (size_t i = 0; i < g_streams.n; i++) {
        stub_stream *s = g_streams.slot[i];
        if (s && s->alive && s->ctx == c) {
            if (!s->is_default) note_leaks(3, 1);
            kill_stream(s);
        }
    }
    for (size_t i = 0; i < g_events.n; i++) {
        stub_event *e = g_events.slot[i];
        if (e && e->alive && e->ctx == c) {
            note_leaks(4, 1);
            kill_event(e);
        }
    }
    if (implicit && !c->is_default) note_leaks(5, 1);
    c->alive = 0;
}

/* release_device frees everything of one device: contexts, streams, events
 * and memory, as aclrtResetDevice does when the last reference goes. */
void release_device(int dev) {
    for (size_t i = 0; i < g_ctxs.n; i++) {
        stub_ctx *c = g_ctxs.slot[i];
        if (c && c->alive && c->device == dev) kill_ctx(c, 1);
    }
    g_dev[dev].defctx = NULL;
    g_dev[dev].set_count = 0;
    g_dev[dev].peers = 0;
    /* Models first: their memory is not reported again as allocations. */
    note_leaks(6, model_release_device(dev));
    note_leaks(0, mem_live_device(dev));
    mem_reset_device(dev);
    pthread_cond_broadcast(&g_cv);
}

static aclError check_dev(const char *fn, int32_t dev) {
    if (dev < 0 || dev >= g_ndev)
        return stub_fail(ACL_ERROR_RT_INVALID_DEVICEID, fn, "device id %d out of range [0, %d)", dev, g_ndev);
    return ACL_SUCCESS;
}

/* read_config returns the content of a config file ("" for none); NULL
 * when it cannot be read. */
static char *read_config(const char *path) {
    if (!path || !*path) return strdup("");
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    size_t k;
    while (b && (k = fread(b + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = realloc(b, 2 * cap + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (b) b[n] = 0;
    return b;
}

STUB_API aclError aclInit(const char *configPath) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    /* hicann/runtime src/acl/aclrt_impl/acl.cpp:387-392 */
    if (g_inited) LOCKED_RETURN(stub_fail(ACL_ERROR_REPEAT_INITIALIZE, __func__, "already initialized"));
    char *cfg = read_config(configPath);
    if (!cfg)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_FILE, __func__, "cannot read config %s: %s", configPath,
                                strerror(errno)));
    /* A later aclInit with a config of other content: acl.cpp:403-416. */
    if (g_init_config && strcmp(g_init_config, cfg) != 0) {
        free(cfg);
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__,
                                "config content differs from the first aclInit config file"));
    }
    aclError r = need_init(__func__);
    if (r) {
        free(cfg);
        LOCKED_RETURN(r);
    }
    if (g_init_config)
        free(cfg);
    else
        g_init_config = cfg;
    g_inited = 1;
    g_finalized = 0;
    LOCKED_RETURN(ACL_SUCCESS);
}

/* aclFinalize: only a repeated finalize is refused (acl.cpp:630-643); one
 * before aclInit succeeds. */
STUB_API aclError aclFinalize(void) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    if (g_finalized) LOCKED_RETURN(stub_fail(ACL_ERROR_REPEAT_FINALIZE, __func__, "already finalized"));
    g_finalized = 1;
    g_inited = 0;
    if (g_state != 1) LOCKED_RETURN(ACL_SUCCESS);
    for (int d = 0; d < g_ndev; d++) release_device(d);
    note_leaks(1, mem_live(1));
    note_leaks(2, mem_live(2));
    mem_reset_host();
    model_reset();
    /* No queue refers to any object any more: free them all. */
    table_free_all(&g_streams);
    table_free_all(&g_events);
    table_free_all(&g_ctxs);
    table_free_all(&g_gates);
    pthread_cond_broadcast(&g_cv);
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtSetDevice(int32_t deviceId) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    if (!r) r = check_dev(__func__, deviceId);
    if (r) LOCKED_RETURN(r);
    device *d = &g_dev[deviceId];
    if (!d->defctx) {
        d->defctx = new_ctx(deviceId, 1);
        if (!d->defctx) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
    }
    d->set_count++;
    set_current_ctx(d->defctx);
    LOCKED_RETURN(ACL_SUCCESS);
}

static aclError reset_device(const char *fn, int32_t deviceId, int force) {
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(fn);
    if (!r) r = check_dev(fn, deviceId);
    if (r) LOCKED_RETURN(r);
    device *d = &g_dev[deviceId];
    /* No primary context to release: hicann/runtime src/runtime/core/src/
     * runtime.cc:2931, api_error.cc:3443-3446 → 507007. */
    if (d->set_count == 0)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, fn,
                                "device %d has not been set or has already been reset", deviceId));
    if (force || --d->set_count == 0) release_device(deviceId);
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtResetDevice(int32_t deviceId) {
    ENTER();
    return reset_device(__func__, deviceId, 0);
}

#ifndef STUB_OMIT_OPTIONAL
STUB_API aclError aclrtResetDeviceForce(int32_t deviceId) {
    ENTER();
    return reset_device(__func__, deviceId, 1);
}
#endif

/* ---- peer access (hicann/runtime src/acl/aclrt_impl/memory.cpp:881-960) ---- */

int peered(int a, int b) {
    return a == b || (g_dev[a].peers >> b & 1u) || (g_dev[b].peers >> a & 1u);
}

#ifndef STUB_OMIT_OPTIONAL
STUB_API aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    if (r) LOCKED_RETURN(r);
    if (deviceId == peerDeviceId)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "deviceId %d cannot be equal to peerDeviceId", deviceId));
    if ((r = check_dev(__func__, peerDeviceId)) || (r = check_dev(__func__, deviceId))) LOCKED_RETURN(r);
    if (!canAccessPeer) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "canAccessPeer is NULL"));
    *canAccessPeer = 1;
    LOCKED_RETURN(ACL_SUCCESS);
}

static aclError peer_call(const char *fn, int32_t peer, uint32_t flags, stub_ctx **c) {
    /* flags is reserved: ACL_ERROR_FEATURE_UNSUPPORTED (memory.cpp:910) */
    if (flags) return stub_fail(ACL_ERROR_FEATURE_UNSUPPORTED, fn, "flags must be 0, got %u", flags);
    aclError r = need_init_ctx(fn, c);
    if (r) return r;
    if (peer == (*c)->device)
        return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "deviceId %d cannot be equal to peerDeviceId", peer);
    return check_dev(fn, peer);
}

STUB_API aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = peer_call(__func__, peerDeviceId, flags, &c);
    if (r) LOCKED_RETURN(r);
    g_dev[c->device].peers |= (uint64_t)1 << peerDeviceId;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = peer_call(__func__, peerDeviceId, 0, &c);
    if (r) LOCKED_RETURN(r);
    g_dev[c->device].peers &= ~((uint64_t)1 << peerDeviceId);
    LOCKED_RETURN(ACL_SUCCESS);
}
#endif

STUB_API aclError aclrtGetDevice(int32_t *deviceId) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!deviceId) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "deviceId is NULL"));
    *deviceId = c->device;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtGetDeviceCount(uint32_t *count) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    if (r) LOCKED_RETURN(r);
    if (!count) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "count is NULL"));
    *count = (uint32_t)g_ndev;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtGetRunMode(aclrtRunMode *runMode) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    if (r) LOCKED_RETURN(r);
    if (!runMode) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "runMode is NULL"));
    *runMode = ACL_HOST;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    if (r) LOCKED_RETURN(r);
    if (!context) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "context is NULL"));
    if ((r = check_dev(__func__, deviceId))) LOCKED_RETURN(r);
    stub_ctx *c = new_ctx(deviceId, 0);
    if (!c) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
    set_current_ctx(c);
    *context = (aclrtContext)c->handle;
    LOCKED_RETURN(ACL_SUCCESS);
}

static aclError lookup_ctx(const char *fn, aclrtContext h, stub_ctx **out) {
    if (!h) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "context is NULL");
    stub_ctx *c = table_get(&g_ctxs, CTX_BASE, (uintptr_t)h);
    /* hicann/runtime src/runtime/api/impl/api_impl.cc:4133-4139, 4184-4187 */
    if (!c || !c->alive) return stub_fail(ACL_ERROR_RT_CONTEXT_NULL, fn, "unknown or destroyed context %p", h);
    *out = c;
    return ACL_SUCCESS;
}

STUB_API aclError aclrtDestroyContext(aclrtContext context) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    stub_ctx *c;
    if (!r) r = lookup_ctx(__func__, context, &c);
    if (r) LOCKED_RETURN(r);
    if (c->is_default)
        /* api_impl.cc:4140-4142: a primary context cannot be destroyed. */
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_CONTEXT_NULL, __func__,
                                "%p is the default context of device %d (released by aclrtResetDevice)", context,
                                c->device));
    kill_ctx(c, 0);
    pthread_cond_broadcast(&g_cv);
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtSetCurrentContext(aclrtContext context) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    stub_ctx *c;
    if (!r) r = lookup_ctx(__func__, context, &c);
    if (r) LOCKED_RETURN(r);
    set_current_ctx(c);
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtGetCurrentContext(aclrtContext *context) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!context) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "context is NULL"));
    *context = (aclrtContext)c->handle;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    if (r) LOCKED_RETURN(r);
    if (!majorVersion || !minorVersion || !patchVersion)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL output pointer"));
    *majorVersion = 1;
    *minorVersion = 15;
    *patchVersion = 0;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API const char *aclrtGetSocName(void) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    int ok = g_inited;
    pthread_mutex_unlock(&g_mu);
    return ok ? "AscendStub" : NULL;
}
