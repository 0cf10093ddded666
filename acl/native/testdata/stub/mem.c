/* Stub libascendcl, memory: device arenas with a first-fit allocator,
 * MallocHost blocks, registered host ranges with their device aliases,
 * pointer classification and the synchronous copy/memset entry points. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "stub.h"

#define DEV_ALIGN 512u
#define HOST_REG_ALIGN 4096u

typedef struct block {
    size_t off, len, req; /* len: rounded size charged to the device */
} block;

typedef struct arena {
    char *base;
    size_t used;
    block *b;
    size_t n, cap;
} arena;

typedef struct hostblk {
    char *addr;
    size_t size;
} hostblk;

typedef struct reg {
    char *host, *alias;
    size_t size;
    int mapped; /* has a device view (not aclrtHostRegisterV2 PINNED alone) */
} reg;

uint64_t g_cap;
static arena *g_arena;
static int g_arena_n;
static hostblk *g_pinned;
static size_t g_npinned, g_cappinned;
static reg *g_regs;
static size_t g_nregs, g_capregs;

int mem_map_devices(int ndev, uint64_t cap) {
    if (g_arena && g_arena_n == ndev && g_cap == cap) return 0;
    for (int i = 0; i < g_arena_n; i++) {
        munmap(g_arena[i].base, g_cap);
        free(g_arena[i].b);
    }
    free(g_arena);
    g_arena = NULL;
    g_arena_n = 0;
    arena *a = calloc((size_t)ndev, sizeof *a);
    if (!a) return -1;
    for (int i = 0; i < ndev; i++) {
        void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            for (int j = 0; j < i; j++) munmap(a[j].base, cap);
            free(a);
            errno = e;
            return -1;
        }
        a[i].base = p;
    }
    g_arena = a;
    g_arena_n = ndev;
    g_cap = cap;
    return 0;
}

void mem_reset_device(int dev) {
    arena *a = &g_arena[dev];
    a->n = 0;
    a->used = 0;
    /* Give the pages back but keep the range reserved: a stale pointer
     * then classifies as freed device memory instead of faulting. */
    madvise(a->base, g_cap, MADV_DONTNEED);
}

static void cancel_tasks(const char *lo, size_t n);

void mem_reset_host(void) {
    for (size_t i = 0; i < g_npinned; i++) free(g_pinned[i].addr);
    g_npinned = 0;
    for (size_t i = 0; i < g_nregs; i++) munmap(g_regs[i].alias, g_regs[i].size);
    g_nregs = 0;
}

uint64_t mem_live_device(int dev) { return g_arena_n > dev ? g_arena[dev].n : 0; }

uint64_t mem_live(int kind) {
    if (kind == 0) {
        uint64_t n = 0;
        for (int i = 0; i < g_arena_n; i++) n += g_arena[i].n;
        return n;
    }
    return kind == 1 ? g_npinned : g_nregs;
}

/* ---- classification ---- */

/* last block with off <= o, or -1 */
static long find_block(const arena *a, size_t o) {
    long lo = 0, hi = (long)a->n - 1, r = -1;
    while (lo <= hi) {
        long m = (lo + hi) / 2;
        if (a->b[m].off <= o) {
            r = m;
            lo = m + 1;
        } else {
            hi = m - 1;
        }
    }
    return r;
}

static long find_pinned(const char *p) {
    long lo = 0, hi = (long)g_npinned - 1, r = -1;
    while (lo <= hi) {
        long m = (lo + hi) / 2;
        if (g_pinned[m].addr <= p) {
            r = m;
            lo = m + 1;
        } else {
            hi = m - 1;
        }
    }
    return r;
}

void classify(const void *pv, size_t n, classified *out) {
    const char *p = pv;
    out->device = -1;
    out->host = (void *)pv;
    for (int d = 0; d < g_arena_n; d++) {
        arena *a = &g_arena[d];
        if (p < a->base || p >= a->base + g_cap) continue;
        size_t o = (size_t)(p - a->base);
        long i = find_block(a, o);
        out->device = d;
        if (i >= 0 && o < a->b[i].off + a->b[i].req) {
            out->kind = MK_DEVICE;
            out->in_range = n <= a->b[i].off + a->b[i].req - o;
        } else {
            out->kind = MK_DEVFREE;
            out->in_range = 0;
        }
        return;
    }
    long i = find_pinned(p);
    if (i >= 0 && p < g_pinned[i].addr + g_pinned[i].size) {
        out->kind = MK_PINNED;
        out->in_range = n <= (size_t)(g_pinned[i].addr + g_pinned[i].size - p);
        return;
    }
    for (size_t k = 0; k < g_nregs; k++) {
        reg *r = &g_regs[k];
        if (p >= r->host && p < r->host + r->size) {
            out->kind = MK_REGISTERED;
            out->in_range = n <= (size_t)(r->host + r->size - p);
            return;
        }
        if (p >= r->alias && p < r->alias + r->size) {
            out->kind = MK_ALIAS;
            out->in_range = n <= (size_t)(r->alias + r->size - p);
            out->host = r->host + (p - r->alias);
            return;
        }
    }
    out->kind = MK_PLAIN;
    out->in_range = 1;
}

static int is_dev(int kind) { return kind == MK_DEVICE || kind == MK_DEVFREE || kind == MK_ALIAS; }

/* Location types of the runtime (rtMemLocationType): device, host memory it
 * knows (aclrtMallocHost, registered), unregistered (pageable). */
enum { LOC_DEV, LOC_HOST, LOC_UNREG };

static int loc_of(const classified *c) {
    if (is_dev(c->kind)) return LOC_DEV;
    return c->kind == MK_PLAIN ? LOC_UNREG : LOC_HOST;
}

/* check_range refuses a range that is not inside live memory: a device
 * pointer outside a live allocation or running past it, a pinned range
 * running past its block. A registered range running past its end counts as
 * pageable memory. */
static aclError check_range(const char *fn, const char *name, const void *p, classified *c) {
    if (is_dev(c->kind)) {
        if (c->kind == MK_DEVFREE)
            return stub_fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s %p is not inside a live device allocation", name, p);
        if (!c->in_range)
            return stub_fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s range at %p runs past the end of its allocation",
                             name, p);
    } else if (c->kind == MK_PINNED && !c->in_range) {
        return stub_fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s range at %p runs past its aclrtMallocHost block", name, p);
    } else if (c->kind == MK_REGISTERED && !c->in_range) {
        c->kind = MK_PLAIN;
    }
    return ACL_SUCCESS;
}

/* correct_kind is the runtime's MemcpyKindAutoCorrect (hicann/runtime
 * src/runtime/api/impl/api_error.cc:2694-2786). */
static aclError correct_kind(const char *fn, int sl, int dl, int *kind) {
    int k = *kind;
    if (sl != LOC_UNREG && dl != LOC_UNREG) {
        *kind = sl == LOC_DEV ? (dl == LOC_DEV ? ACL_MEMCPY_DEVICE_TO_DEVICE : ACL_MEMCPY_DEVICE_TO_HOST)
                              : (dl == LOC_DEV ? ACL_MEMCPY_HOST_TO_DEVICE : ACL_MEMCPY_HOST_TO_HOST);
        return ACL_SUCCESS;
    }
    int allowed[4], n = 0;
    if (sl == LOC_UNREG && dl == LOC_DEV) {
        allowed[n++] = ACL_MEMCPY_HOST_TO_DEVICE, allowed[n++] = ACL_MEMCPY_DEVICE_TO_DEVICE;
    } else if (sl == LOC_DEV && dl == LOC_UNREG) {
        allowed[n++] = ACL_MEMCPY_DEVICE_TO_HOST, allowed[n++] = ACL_MEMCPY_DEVICE_TO_DEVICE;
    } else if (sl == LOC_HOST) {
        allowed[n++] = ACL_MEMCPY_HOST_TO_HOST, allowed[n++] = ACL_MEMCPY_HOST_TO_DEVICE;
    } else if (dl == LOC_HOST) {
        allowed[n++] = ACL_MEMCPY_HOST_TO_HOST, allowed[n++] = ACL_MEMCPY_DEVICE_TO_HOST;
    } else {
        allowed[n++] = ACL_MEMCPY_HOST_TO_HOST, allowed[n++] = ACL_MEMCPY_HOST_TO_DEVICE;
        allowed[n++] = ACL_MEMCPY_DEVICE_TO_HOST, allowed[n++] = ACL_MEMCPY_DEVICE_TO_DEVICE;
    }
    if (k == ACL_MEMCPY_DEFAULT) {
        *kind = allowed[0];
        return ACL_SUCCESS;
    }
    for (int i = 0; i < n; i++)
        if (allowed[i] == k) return ACL_SUCCESS;
    return stub_fail(ACL_ERROR_RT_PARAM_INVALID, fn, "copy kind %d is not allowed for these memory locations", k);
}

/* check_copy checks a copy of count > 0 bytes. async is NULL for a
 * synchronous copy, whose kind the runtime does not compare with the
 * memory (api_error.cc:2129-2152); for an asynchronous copy *async is set
 * when pageable memory makes it synchronous. */
aclError check_copy(const char *fn, void *dst, size_t destMax, const void *src, size_t count, int kind, int *async,
                    void **hdst, const void **hsrc) {
    /* NULL and untranslated kinds: the ACL layer (memory.cpp:658-664,
     * 162-199); count > destMax: the runtime (api_error.cc:2138, 2184). */
    if (!dst || !src) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL", dst ? "src" : "dst");
    if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
        return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "copy kind %d is not translated by the ACL layer", kind);
    if (destMax < count) return stub_fail(ACL_ERROR_RT_PARAM_INVALID, fn, "destMax %zu < count %zu", destMax, count);
    classified d, s;
    classify(dst, count, &d);
    classify(src, count, &s);
    aclError r = check_range(fn, "dst", dst, &d);
    if (!r) r = check_range(fn, "src", src, &s);
    if (r) return r;
    if (d.kind == MK_DEVICE && s.kind == MK_DEVICE && d.device != s.device && !peered(d.device, s.device))
        return stub_fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                         "src is on device %d and dst on device %d without peer access between them", s.device,
                         d.device);
    *hdst = d.host;
    *hsrc = s.host;
    if (!async) return ACL_SUCCESS;
    int sl = loc_of(&s), dl = loc_of(&d);
    if (kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE) {
        /* Checked by the driver (api_error.cc:2228-2235); the stub keeps
         * a placement check. */
        if (dl != LOC_DEV || sl == LOC_DEV)
            return stub_fail(ACL_ERROR_RT_INVALID_MEMORY_TYPE, fn, "HOST_TO_BUF_TO_DEVICE needs host to device memory");
    } else {
        if ((r = correct_kind(fn, sl, dl, &kind))) return r;
        /* api_error.cc:2246-2248 */
        if (kind == ACL_MEMCPY_HOST_TO_HOST)
            return stub_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, "an asynchronous host to host copy is not supported");
    }
    *async = sl == LOC_UNREG || dl == LOC_UNREG;
    return ACL_SUCCESS;
}

/* check_set checks a memset of count > 0 bytes: NULL is the ACL layer's
 * 100000, count > maxCount the runtime's 107000 (api_error.cc:3134);
 * device, aclrtMallocHost and registered memory may be set, plain host
 * memory is refused (undefined in the documentation; the code is the
 * stub's choice, as the fallback's). */
aclError check_set(const char *fn, void *p, size_t maxCount, size_t count, void **hp) {
    if (!p) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "devPtr is NULL");
    if (maxCount < count) return stub_fail(ACL_ERROR_RT_PARAM_INVALID, fn, "maxCount %zu < count %zu", maxCount, count);
    classified c;
    classify(p, count, &c);
    aclError r = check_range(fn, "devPtr", p, &c);
    if (r) return r;
    if (c.kind == MK_PLAIN)
        return stub_fail(ACL_ERROR_RT_INVALID_MEMORY_TYPE, fn, "%p is plain host memory; memset needs device or aclrtMallocHost memory", p);
    *hp = c.host;
    return ACL_SUCCESS;
}

/* ---- device memory ---- */

static int arena_alloc(arena *a, size_t size, void **out) {
    size_t need = (size + DEV_ALIGN - 1) / DEV_ALIGN * DEV_ALIGN;
    if (need < size) return -1;
    size_t prev = 0, at = a->n;
    for (size_t i = 0; i < a->n; i++) {
        if (a->b[i].off - prev >= need) {
            at = i;
            break;
        }
        prev = a->b[i].off + a->b[i].len;
    }
    if (at == a->n && g_cap - prev < need) return -1;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        block *b = realloc(a->b, cap * sizeof *b);
        if (!b) return -1;
        a->b = b;
        a->cap = cap;
    }
    memmove(&a->b[at + 1], &a->b[at], (a->n - at) * sizeof *a->b);
    a->b[at] = (block){.off = prev, .len = need, .req = size};
    a->n++;
    a->used += need;
    *out = a->base + prev;
    return 0;
}

int dev_alloc(int dev, size_t size, void **out) { return arena_alloc(&g_arena[dev], size, out); }

void dev_free(int dev, void *p) {
    arena *a = &g_arena[dev];
    size_t o = (size_t)((char *)p - a->base);
    long i = find_block(a, o);
    if (i < 0 || a->b[i].off != o) return;
    a->used -= a->b[i].len;
    memmove(&a->b[i], &a->b[i + 1], (a->n - (size_t)i - 1) * sizeof *a->b);
    a->n--;
}

STUB_API aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!devPtr) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "devPtr is NULL"));
    if (size == 0) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "size is 0"));
    /* An undefined policy is accepted (memory.cpp:320-339). */
    (void)policy;
    arena *a = &g_arena[c->device];
    if (arena_alloc(a, size, devPtr) != 0)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, __func__,
                                "cannot allocate %zu bytes on device %d (%zu of %zu bytes free)", size, c->device,
                                (size_t)(g_cap - a->used), (size_t)g_cap));
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtFree(void *devPtr) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!devPtr) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "devPtr is NULL"));
    for (int d = 0; d < g_arena_n; d++) {
        arena *a = &g_arena[d];
        char *p = devPtr;
        if (p < a->base || p >= a->base + g_cap) continue;
        size_t o = (size_t)(p - a->base);
        long i = find_block(a, o);
        if (i < 0 || a->b[i].off != o) break;
        cancel_tasks(p, a->b[i].req);
        a->used -= a->b[i].len;
        memmove(&a->b[i], &a->b[i + 1], (a->n - (size_t)i - 1) * sizeof *a->b);
        a->n--;
        LOCKED_RETURN(ACL_SUCCESS);
    }
    LOCKED_RETURN(stub_fail(ACL_ERROR_RT_PARAM_INVALID, __func__,
                            "%p is not the start of a live device allocation (unknown, freed or interior pointer)",
                            devPtr));
}

#ifndef STUB_OMIT_REQUIRED
STUB_API aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_, size_t *total) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!free_ || !total) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL output pointer"));
    /* hicann/runtime src/runtime/api/impl/api_error.cc:3184-3187 */
    if ((int)attr < ACL_DDR_MEM || (int)attr > ACL_MEM_P2P_HUGE1G)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_INVALID_MEMORY_TYPE, __func__, "undefined memory attribute %d", (int)attr));
    *total = (size_t)g_cap;
    *free_ = (size_t)(g_cap - g_arena[c->device].used);
    LOCKED_RETURN(ACL_SUCCESS);
}
#endif

/* ---- pinned host memory ---- */

STUB_API aclError aclrtMallocHost(void **hostPtr, size_t size) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!hostPtr) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "hostPtr is NULL"));
    if (size == 0) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "size is 0"));
    if (g_npinned == g_cappinned) {
        size_t cap = g_cappinned ? g_cappinned * 2 : 64;
        hostblk *b = realloc(g_pinned, cap * sizeof *b);
        if (!b) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
        g_pinned = b;
        g_cappinned = cap;
    }
    void *p = NULL;
    if (posix_memalign(&p, HOST_REG_ALIGN, size) != 0)
        LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "cannot allocate %zu bytes of host memory", size));
    long i = find_pinned(p) + 1;
    memmove(&g_pinned[i + 1], &g_pinned[i], (g_npinned - (size_t)i) * sizeof *g_pinned);
    g_pinned[i] = (hostblk){.addr = p, .size = size};
    g_npinned++;
    *hostPtr = p;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtFreeHost(void *hostPtr) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!hostPtr) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "hostPtr is NULL"));
    long i = find_pinned(hostPtr);
    if (i < 0 || g_pinned[i].addr != hostPtr)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_PARAM_INVALID, __func__,
                                "%p is not the start of a live aclrtMallocHost block", hostPtr));
    cancel_tasks(g_pinned[i].addr, g_pinned[i].size);
    free(g_pinned[i].addr);
    memmove(&g_pinned[i], &g_pinned[i + 1], (g_npinned - (size_t)i - 1) * sizeof *g_pinned);
    g_npinned--;
    LOCKED_RETURN(ACL_SUCCESS);
}

/* ---- synchronous copy and memset ---- */

/* count 0 succeeds before any check (memory.cpp:653, 674). */
STUB_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
    ENTER();
    if (count == 0) return ACL_SUCCESS;
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    void *hd;
    const void *hs;
    if (!r) r = check_copy(__func__, dst, destMax, src, count, (int)kind, NULL, &hd, &hs);
    if (r) LOCKED_RETURN(r);
    memmove(hd, hs, count);
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
    ENTER();
    if (count == 0) return ACL_SUCCESS;
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    void *hp;
    if (!r) r = check_set(__func__, devPtr, maxCount, count, &hp);
    if (r) LOCKED_RETURN(r);
    memset(hp, value, count);
    LOCKED_RETURN(ACL_SUCCESS);
}

/* ---- host registration ---- */

static long find_reg_overlap(const char *p, size_t n) {
    for (size_t k = 0; k < g_nregs; k++)
        if (p < g_regs[k].host + g_regs[k].size && g_regs[k].host < p + n) return (long)k;
    return -1;
}

static aclError add_reg(const char *fn, void *ptr, uint64_t size, int mapped, void **alias) {
    const char *p = ptr;
    for (int d = 0; d < g_arena_n; d++)
        if (p < g_arena[d].base + g_cap && g_arena[d].base < p + size)
            return stub_fail(ACL_ERROR_RT_INVALID_MEMORY_TYPE, fn, "range %p+%llu overlaps device memory", ptr,
                             (unsigned long long)size);
    for (size_t k = 0; k < g_nregs; k++)
        if (p < g_regs[k].alias + g_regs[k].size && g_regs[k].alias < p + size)
            return stub_fail(ACL_ERROR_RT_INVALID_MEMORY_TYPE, fn,
                             "range %p+%llu overlaps the device view of registered memory", ptr,
                             (unsigned long long)size);
    if (find_reg_overlap(ptr, size) >= 0)
        return stub_fail(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, fn,
                         "range %p+%llu overlaps a registered range", ptr, (unsigned long long)size);
    if (g_nregs == g_capregs) {
        size_t cap = g_capregs ? g_capregs * 2 : 16;
        reg *r = realloc(g_regs, cap * sizeof *r);
        if (!r) return stub_fail(ACL_ERROR_BAD_ALLOC, fn, "out of host memory");
        g_regs = r;
        g_capregs = cap;
    }
    /* The device view is a separate, inaccessible address range that the
     * copy functions translate, as a device address would be. */
    void *a = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED) return stub_fail(ACL_ERROR_BAD_ALLOC, fn, "cannot reserve a device view: %s", strerror(errno));
    g_regs[g_nregs++] = (reg){.host = ptr, .alias = a, .size = size, .mapped = mapped};
    if (alias) *alias = a;
    return ACL_SUCCESS;
}

#ifndef STUB_OMIT_OPTIONAL
STUB_API aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!ptr || !devPtr) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL pointer argument"));
    if (size == 0) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "size is 0"));
    /* hicann/runtime src/runtime/api/impl/api_error.cc:1997-2002 */
    if ((unsigned)type & ~(unsigned)(ACL_HOST_REGISTER_IOMEMORY | ACL_HOST_REGISTER_READONLY))
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, __func__, "register type 0x%x is not supported", (unsigned)type));
    /* The driver's check, not in the public source: 107000 here. */
    if ((uintptr_t)ptr % HOST_REG_ALIGN)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_PARAM_INVALID, __func__, "%p is not 4 KiB aligned", ptr));
    LOCKED_RETURN(add_reg(__func__, ptr, size, 1, devPtr));
}
#endif

STUB_API aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!ptr) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "ptr is NULL"));
    if (size == 0) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "size is 0"));
    uint32_t known = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED;
    /* hicann/runtime src/runtime/api/impl/api_error.cc:2015-2021 */
    if (!(flag & known) || (flag & ~known))
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_PARAM_INVALID, __func__, "undefined flag 0x%x", flag));
    /* MAPPED, IOMEMORY or READONLY map the memory for the device; PINNED
     * alone only pins it (hicann/runtime src/runtime/api/impl/
     * api_impl.cc:2593-2609). */
    int mapped = (flag & (ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY)) != 0;
    LOCKED_RETURN(add_reg(__func__, ptr, size, mapped, NULL));
}

#ifndef STUB_OMIT_OPTIONAL
STUB_API aclError aclrtHostUnregister(void *ptr) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!ptr) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "ptr is NULL"));
    for (size_t k = 0; k < g_nregs; k++) {
        if (g_regs[k].host != ptr) continue;
        cancel_tasks(g_regs[k].host, g_regs[k].size);
        cancel_tasks(g_regs[k].alias, g_regs[k].size);
        munmap(g_regs[k].alias, g_regs[k].size);
        g_regs[k] = g_regs[--g_nregs];
        LOCKED_RETURN(ACL_SUCCESS);
    }
    LOCKED_RETURN(stub_fail(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, __func__, "%p is not a registered address", ptr));
}
#endif

#ifndef STUB_OMIT_OPTIONAL
STUB_API aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!pHost || !pDevice) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL pointer argument"));
    if (flag != 0) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "flag must be 0, got %u", flag));
    for (size_t k = 0; k < g_nregs; k++) {
        char *p = pHost;
        if (p >= g_regs[k].host && p < g_regs[k].host + g_regs[k].size) {
            /* Pinned, not mapped: no device address (api_impl.cc:2652-2660 → 107000). */
            if (!g_regs[k].mapped)
                LOCKED_RETURN(stub_fail(ACL_ERROR_RT_PARAM_INVALID, __func__,
                                        "%p was registered PINNED only, without a device mapping", pHost));
            *pDevice = g_regs[k].alias + (p - g_regs[k].host);
            LOCKED_RETURN(ACL_SUCCESS);
        }
    }
    /* hicann/runtime src/runtime/api/impl/api_impl.cc:2653-2666 → 107000 */
    LOCKED_RETURN(stub_fail(ACL_ERROR_RT_PARAM_INVALID, __func__, "%p is not inside registered memory", pHost));
}
#endif

/* ---- pending tasks on memory being released ---- */

/* cancel_tasks makes queued copies and memsets that touch [lo, lo+n) fail
 * with ACL_ERROR_RT_DEVICE_MEM_ERROR (sticky) instead of touching the
 * memory being released when their stream reaches them. */
static void cancel_tasks(const char *lo, size_t n) {
    if (!g_queued) return;
    const char *hi = lo + n;
    for (size_t i = 0; i < g_streams.n; i++) {
        stub_stream *s = g_streams.slot[i];
        if (!s || !s->alive) continue;
        for (task *t = s->head; t; t = t->next) {
            if (t->type == TASK_CALL) {
                if (call_touches(t->arg, lo, hi)) t->fail = ACL_ERROR_RT_DEVICE_MEM_ERROR;
                continue;
            }
            if (t->type != TASK_COPY && t->type != TASK_SET) continue;
            const char *d = t->dst, *sr = t->src;
            int hit = d < hi && lo < d + t->n;
            if (t->type == TASK_COPY) hit |= sr < hi && lo < sr + t->n;
            if (hit) {
                t->n = 0;
                t->fail = ACL_ERROR_RT_DEVICE_MEM_ERROR;
            }
        }
    }
}
