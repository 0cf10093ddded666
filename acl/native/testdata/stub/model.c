/* Stub libascendcl, model API (acl_mdl.h and the data buffers of
 * acl_base.h) over a model format of the stub's own:
 *
 *   offset 0   char     magic[8] = "STUBOM01"
 *          8   uint32   n: number of inputs = number of outputs, 1..8, in the
 *              low 16 bits; bit 31: a dims-range table follows the gears
 *         12   uint32   g: number of batch gears, 0 (static) to 8, in the low
 *              16 bits; bit 16+k: output k must reuse input k's memory (the
 *              model attribute ge.exec.outputReuseInputMemIndexes "k,k");
 *              bit 24+k: output k is always copied out of the model's own
 *              block (its producer takes no external address)
 *         16   uint64   work_size   (>= 8: execution counter at offset 0)
 *         24   uint64   weight_size (>= 8*n: one 8-byte addend slot per io)
 *         32   n input then n output descriptors of 144 bytes each:
 *                char name[64]; int32 dtype; int32 format;
 *                uint64 dim_count (<= 8); int64 dims[8]
 *          .   g uint64 batch gears (aclmdlGetDynamicBatch reports them;
 *              aclmdlSetDynamicBatchSize accepts only them and writes the
 *              batch into the buffer it is given, as GE does)
 *          .   with bit 31 of n: per input, 8 (lo, hi) int64 pairs: the range
 *              of each -1 dim (hi -1: no upper bound); without it a -1 dim
 *              ranges over [1, -1]
 *          .   weight_size bytes of weights
 *
 * Every model is "add a constant": output k = input k + addend k, element
 * by element, where input k and output k have the same dtype (ACL_FLOAT or
 * ACL_INT32) and element count, and addend k is the float or int32 at the
 * start of weight slot k. Weights are copied into the weight memory at load
 * and read from there at execution; each execution increments the uint64
 * counter at the start of the work memory. With caller-owned memory
 * (..._WITH_MEM) both effects are visible to the caller, which proves the
 * memory is the one used.
 *
 * A dim of -1 is unknown (ATC's --input_shape with -1): input k and output
 * k then have the same dims, and each execution takes input k's real shape
 * from the tensor description set on the input dataset
 * (aclmdlSetDatasetTensorDesc), which the stub records (stub_exec_desc) so
 * a test can assert what the binding passed; after the run output k's
 * real shape, input k's, is set on the output dataset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"

#define MAGIC "STUBOM01"
#define MAX_IO 8
#define MAX_DIMS 8
#define MAX_GEARS 8
#define GE_DYNAMIC_INPUT_LENGTH_INVALID 145012
#define GE_DYNAMIC_BATCH_SIZE_INVALID 145013
#define HDR 32
#define IO_DESC 144
#define GE_PARAM_INVALID 145000
#define GE_EXEC_MODEL_ID_INVALID 145003
#define GE_EXEC_MODEL_ADDR_INVALID 145007
#define GE_MEMORY_ALLOCATION 245000
#define RT_MODEL_EXECUTE 507011
#define RT_AICORE_EXCEPTION 507015
#define RT_SYS_DMA 507013
#define RT_MODEL_CONTEXT 107004
#define SIZE_SLACK 64 /* a buffer may be this much smaller than its io */
#define DESC_BASE ((uintptr_t)5 << 40)
#define DATASET_BASE ((uintptr_t)6 << 40)
#define DBUF_BASE ((uintptr_t)7 << 40)
#define CONFIG_BASE ((uintptr_t)8 << 40)
#define NUM_ATTRS (ACL_MDL_FIFO_SIZET + 1)

typedef struct io {
    char name[64];
    int32_t dtype, format;
    uint64_t ndims;
    int64_t dims[MAX_DIMS];
    int64_t lo[MAX_DIMS], hi[MAX_DIMS]; /* the range of each dim */
    int dynamic;                        /* a dim is -1 */
    size_t bytes;                       /* 0 when dynamic */
} io;

typedef struct model {
    uint32_t id;
    uint32_t n;
    io in[MAX_IO], out[MAX_IO];
    uint32_t ngears, reuse, copy;
    uint64_t gears[MAX_GEARS];
    uint64_t cur_batch; /* the batch aclmdlSetDynamicBatchSize chose, 0 before */
    char *work, *weight; /* addresses the stub can touch */
    size_t work_size, weight_size;
    int owns;   /* work and weight were allocated by the load, on device */
    int device; /* the device of the context it was loaded in */
    const stub_ctx *ctx; /* that context: executes need it current */
    uint32_t pending;            /* asynchronous executions queued */
    stub_stream *pending_stream; /* the stream they are queued on */
    int mode;                    /* 0 never executed, 1 aclmdlExecute, 2 aclmdlExecuteAsync */
    int dynamic;                 /* an input has unknown dims */
} model;

struct aclmdlDesc {
    int filled;
    uint32_t n;
    io in[MAX_IO], out[MAX_IO];
    uint32_t ngears;
    uint64_t gears[MAX_GEARS];
    uint32_t model_id;
};

struct aclDataBuffer {
    void *data;
    size_t size;
};

struct aclmdlDataset {
    uintptr_t *bufs;
    uintptr_t *descs; /* per entry: the tensor description it owns, or 0 */
    size_t n, cap;
};

struct aclmdlConfigHandle {
    uint64_t set; /* bit per attribute */
    uint64_t val[NUM_ATTRS];
    char *path;
};

static table g_models, g_descs, g_datasets, g_dbufs, g_configs;

/* ---- parsing ---- */

static size_t dtype_size(int32_t dt) { return dt == ACL_FLOAT || dt == ACL_INT32 ? 4 : 0; }

typedef struct parsed {
    uint32_t n, ngears, reuse, copy;
    uint64_t work_size, weight_size;
    uint64_t gears[MAX_GEARS];
    io in[MAX_IO], out[MAX_IO];
    const char *weights;
} parsed;

static int parse_io(const char *p, io *d) {
    memcpy(d->name, p, 64);
    d->name[63] = 0;
    memcpy(&d->dtype, p + 64, 4);
    memcpy(&d->format, p + 68, 4);
    memcpy(&d->ndims, p + 72, 8);
    memcpy(d->dims, p + 80, 64);
    if (d->ndims > MAX_DIMS || !dtype_size(d->dtype)) return -1;
    size_t e = 1;
    d->dynamic = 0;
    for (uint64_t i = 0; i < d->ndims; i++) {
        if (d->dims[i] == -1) {
            d->dynamic = 1;
            d->lo[i] = 1;
            d->hi[i] = -1;
            continue;
        }
        if (d->dims[i] <= 0 || d->dims[i] > (1 << 28)) return -1;
        d->lo[i] = d->hi[i] = d->dims[i];
        e *= (size_t)d->dims[i];
        if (e > ((size_t)1 << 32)) return -1;
    }
    d->bytes = d->dynamic ? 0 : e * dtype_size(d->dtype);
    return 0;
}

static aclError parse(const char *fn, const void *data, size_t size, parsed *m) {
    const char *p = data;
    if (!p) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "model is NULL");
    if (size == 0) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "model size is 0");
    /* Codes GE returns (not the ones it logs), hicann/ge: fewer than 4
     * bytes fail the om2 magic check on every call (runtime/om2/
     * om2_model_executor.cc:1698-1706); bytes shorter than the header are
     * 145006 for a load (base/common/helper/model_helper.cc:1158-1166) and
     * 145000 for the size query (runtime/v1/graph/load/model_manager/
     * model_manager.cc:2364-2367); a bad magic, a header length that
     * disagrees with the data and any other parse failure are 145000
     * (model_helper.cc:1267-1270, model_manager.cc:2364-2367). */
    if (size < 4) return stub_fail(ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID, fn, "model size %zu is below 4", size);
    if (size < HDR)
        return stub_fail(strcmp(fn, "aclmdlQuerySizeFromMem") == 0 ? GE_PARAM_INVALID
                                                                    : ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID,
                         fn, "model size %zu is below the header", size);
    if (memcmp(p, MAGIC, 8) != 0) return stub_fail(GE_PARAM_INVALID, fn, "not a stub model (bad magic)");
    memcpy(&m->n, p + 8, 4);
    int ranged = (int)(m->n >> 31);
    m->n &= 0xffff;
    memcpy(&m->ngears, p + 12, 4);
    m->reuse = m->ngears >> 16 & 0xff;
    m->copy = m->ngears >> 24;
    m->ngears &= 0xffff;
    memcpy(&m->work_size, p + 16, 8);
    memcpy(&m->weight_size, p + 24, 8);
    if (m->n < 1 || m->n > MAX_IO) return stub_fail(GE_PARAM_INVALID, fn, "io count %u not in [1, 8]", m->n);
    if (m->work_size < 8 || m->weight_size < 8ull * m->n || m->weight_size > (1ull << 32) ||
        m->work_size > (1ull << 32))
        return stub_fail(GE_PARAM_INVALID, fn, "bad work or weight size");
    if (m->ngears > MAX_GEARS) return stub_fail(GE_PARAM_INVALID, fn, "gear count %u not in [0, 8]", m->ngears);
    if ((m->reuse | m->copy) >> m->n)
        return stub_fail(GE_PARAM_INVALID, fn, "reuse or copy mask names an io past %u", m->n);
    size_t ranges = ranged ? (size_t)m->n * MAX_DIMS * 16 : 0;
    size_t want = HDR + 2 * (size_t)m->n * IO_DESC + 8 * (size_t)m->ngears + ranges + m->weight_size;
    if (size != want)
        return stub_fail(GE_PARAM_INVALID, fn, "model size %zu, the header says %zu", size, want);
    for (uint32_t k = 0; k < m->n; k++) {
        if (parse_io(p + HDR + k * IO_DESC, &m->in[k]) || parse_io(p + HDR + (m->n + k) * IO_DESC, &m->out[k]))
            return stub_fail(GE_PARAM_INVALID, fn, "bad descriptor of io %u", k);
        if (m->in[k].dtype != m->out[k].dtype || m->in[k].bytes != m->out[k].bytes ||
            m->in[k].dynamic != m->out[k].dynamic ||
            (m->in[k].dynamic && (m->in[k].ndims != m->out[k].ndims ||
                                  memcmp(m->in[k].dims, m->out[k].dims, 8 * m->in[k].ndims) != 0)))
            return stub_fail(GE_PARAM_INVALID, fn, "input %u and output %u differ in type, size or dims", k, k);
    }
    const char *g = p + HDR + 2 * (size_t)m->n * IO_DESC;
    for (uint32_t k = 0; k < m->ngears; k++) {
        memcpy(&m->gears[k], g + 8 * k, 8);
        if (m->gears[k] == 0) return stub_fail(GE_PARAM_INVALID, fn, "batch gear %u is 0", k);
    }
    const char *rt = g + 8 * (size_t)m->ngears;
    for (uint32_t k = 0; ranged && k < m->n; k++) {
        io *d = &m->in[k];
        for (uint64_t i = 0; i < d->ndims; i++) {
            int64_t lo, hi;
            memcpy(&lo, rt + (k * MAX_DIMS + i) * 16, 8);
            memcpy(&hi, rt + (k * MAX_DIMS + i) * 16 + 8, 8);
            if (d->dims[i] != -1) continue; /* a fixed dim's range is itself */
            if (lo < 1 || (hi != -1 && hi < lo)) return stub_fail(GE_PARAM_INVALID, fn, "input %u dim %llu: bad range [%lld, %lld]", k, (unsigned long long)i, (long long)lo, (long long)hi);
            d->lo[i] = lo;
            d->hi[i] = hi;
        }
    }
    m->weights = rt + ranges;
    return ACL_SUCCESS;
}

/* ---- loading ---- */

/* device_mem checks that [p, p+n) is live device memory (or the device view
 * of registered memory) and returns the address to touch. */
static aclError device_mem(const char *fn, const char *what, void *p, size_t n, char **out) {
    if (!p) return stub_fail(GE_PARAM_INVALID, fn, "%s is NULL", what);
    classified c;
    classify(p, n, &c);
    if (c.kind != MK_DEVICE && c.kind != MK_ALIAS)
        return stub_fail(GE_PARAM_INVALID, fn, "%s %p is not device memory", what, p);
    if (!c.in_range) return stub_fail(GE_PARAM_INVALID, fn, "%s %p+%zu runs past its allocation", what, p, n);
    *out = c.host;
    return ACL_SUCCESS;
}

/* load registers a parsed model on the device of ctx; work/weight are
 * caller memory (with_mem) or allocated on the device. */
static aclError load(const char *fn, stub_ctx *ctx, const parsed *pm, uint32_t *modelId, void *work, size_t workSize,
                     void *weight, size_t weightSize, int with_mem) {
    if (!modelId) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "modelId is NULL");
    aclError r;
    model *m = calloc(1, sizeof *m);
    if (!m) return stub_fail(ACL_ERROR_BAD_ALLOC, fn, "out of host memory");
    m->n = pm->n;
    memcpy(m->in, pm->in, sizeof m->in);
    memcpy(m->out, pm->out, sizeof m->out);
    m->ngears = pm->ngears;
    m->reuse = pm->reuse;
    m->copy = pm->copy;
    memcpy(m->gears, pm->gears, sizeof m->gears);
    m->work_size = pm->work_size;
    m->weight_size = pm->weight_size;
    for (uint32_t k = 0; k < pm->n; k++) m->dynamic |= pm->in[k].dynamic;
    m->device = ctx->device;
    m->ctx = ctx;
    if (with_mem) {
        if (workSize < pm->work_size || weightSize < pm->weight_size) {
            free(m);
            return stub_fail(GE_PARAM_INVALID, fn, "work %zu/%llu or weight %zu/%llu bytes too small", workSize,
                             (unsigned long long)pm->work_size, weightSize, (unsigned long long)pm->weight_size);
        }
        if ((r = device_mem(fn, "work memory", work, pm->work_size, &m->work)) ||
            (r = device_mem(fn, "weight memory", weight, pm->weight_size, &m->weight))) {
            free(m);
            return r;
        }
        if (m->work < m->weight + pm->weight_size && m->weight < m->work + pm->work_size) {
            free(m);
            return stub_fail(GE_PARAM_INVALID, fn, "work memory %p and weight memory %p overlap", work, weight);
        }
    } else {
        void *w = NULL, *g = NULL;
        if (dev_alloc(ctx->device, pm->work_size, &w) != 0 || dev_alloc(ctx->device, pm->weight_size, &g) != 0) {
            if (w) dev_free(ctx->device, w);
            free(m);
            return stub_fail(GE_MEMORY_ALLOCATION, fn, "device %d has no room for the model (%llu + %llu bytes)",
                             ctx->device, (unsigned long long)pm->work_size, (unsigned long long)pm->weight_size);
        }
        m->owns = 1;
        m->work = w;
        m->weight = g;
    }
    memcpy(m->weight, pm->weights, pm->weight_size);
    memset(m->work, 0, 8);
    uintptr_t h = table_add(&g_models, 0, m);
    if (!h) {
        if (m->owns) {
            dev_free(m->device, m->work);
            dev_free(m->device, m->weight);
        }
        free(m);
        return stub_fail(ACL_ERROR_BAD_ALLOC, fn, "out of host memory");
    }
    m->id = (uint32_t)(h / HANDLE_STEP); /* 1, 2, ...; never reused */
    *modelId = m->id;
    return ACL_SUCCESS;
}

static model *find_model(uint32_t id) {
    if (id == 0) return NULL;
    return table_get(&g_models, 0, (uintptr_t)id * HANDLE_STEP);
}

static void unload(model *m) {
    if (m->owns) {
        dev_free(m->device, m->work);
        dev_free(m->device, m->weight);
    }
    g_models.slot[m->id - 1] = NULL;
    free(m);
}

void model_reset(void) {
    for (size_t i = 0; i < g_models.n; i++)
        if (g_models.slot[i]) unload(g_models.slot[i]);
}

uint64_t model_release_device(int dev) {
    uint64_t n = 0;
    for (size_t i = 0; i < g_models.n; i++) {
        model *m = g_models.slot[i];
        if (m && m->device == dev) {
            unload(m);
            n++;
        }
    }
    return n;
}

uint64_t model_live(void) {
    uint64_t n = 0;
    for (size_t i = 0; i < g_models.n; i++) n += g_models.slot[i] != NULL;
    return n;
}

STUB_API aclError aclmdlQuerySizeFromMem(const void *model_, size_t modelSize, size_t *workSize, size_t *weightSize) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_ge(__func__);
    if (r) LOCKED_RETURN(r);
    if (!workSize || !weightSize) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL output pointer"));
    parsed pm;
    if ((r = parse(__func__, model_, modelSize, &pm))) LOCKED_RETURN(r);
    *workSize = pm.work_size;
    *weightSize = pm.weight_size;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclmdlLoadFromMem(const void *model_, size_t modelSize, uint32_t *modelId) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_ge_ctx(__func__, &c);
    parsed pm;
    if (!r) r = parse(__func__, model_, modelSize, &pm);
    if (!r) r = load(__func__, c, &pm, modelId, NULL, 0, NULL, 0, 0);
    LOCKED_RETURN(r);
}

STUB_API aclError aclmdlLoadFromMemWithMem(const void *model_, size_t modelSize, uint32_t *modelId, void *workPtr,
                                           size_t workSize, void *weightPtr, size_t weightSize) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_ge_ctx(__func__, &c);
    parsed pm;
    if (!r) r = parse(__func__, model_, modelSize, &pm);
    if (!r) r = load(__func__, c, &pm, modelId, workPtr, workSize, weightPtr, weightSize, 1);
    LOCKED_RETURN(r);
}

STUB_API aclError aclmdlUnload(uint32_t modelId) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_ge_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    model *m = find_model(modelId);
    while (m && m->pending) { /* queued executions run first */
        pthread_cond_wait(&g_cv, &g_mu);
        m = g_state == 1 ? find_model(modelId) : NULL;
    }
    if (!m) LOCKED_RETURN(stub_fail(GE_EXEC_MODEL_ID_INVALID, __func__, "no loaded model %u", modelId));
    unload(m);
    LOCKED_RETURN(ACL_SUCCESS);
}

/* ---- load configuration ---- */

static aclmdlConfigHandle *get_config(const aclmdlConfigHandle *h) {
    return h ? table_get(&g_configs, CONFIG_BASE, (uintptr_t)h) : NULL;
}

STUB_API aclmdlConfigHandle *aclmdlCreateConfigHandle(void) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    aclmdlConfigHandle *c = calloc(1, sizeof *c);
    uintptr_t h = c ? table_add(&g_configs, CONFIG_BASE, c) : 0;
    if (!h) {
        free(c);
        stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory");
    }
    pthread_mutex_unlock(&g_mu);
    return (aclmdlConfigHandle *)h;
}

STUB_API aclError aclmdlDestroyConfigHandle(aclmdlConfigHandle *handle) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclmdlConfigHandle *c = get_config(handle);
    if (!c) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown config handle %p", handle));
    g_configs.slot[((uintptr_t)handle - CONFIG_BASE) / HANDLE_STEP - 1] = NULL;
    free(c->path);
    free(c);
    LOCKED_RETURN(ACL_SUCCESS);
}

/* value size each attribute takes: int32, size_t or a pointer */
static size_t attr_size(int attr) {
    switch (attr) {
    case ACL_MDL_PRIORITY_INT32: return sizeof(int32_t);
    case ACL_MDL_PATH_PTR:
    case ACL_MDL_MEM_ADDR_PTR:
    case ACL_MDL_WEIGHT_ADDR_PTR:
    case ACL_MDL_WORKSPACE_ADDR_PTR:
    case ACL_MDL_INPUTQ_ADDR_PTR:
    case ACL_MDL_OUTPUTQ_ADDR_PTR:
    case ACL_MDL_WEIGHT_PATH_PTR:
    case ACL_MDL_MODEL_DESC_PTR:
    case ACL_MDL_KERNEL_PTR:
    case ACL_MDL_KERNEL_ARGS_PTR:
    case ACL_MDL_STATIC_TASK_PTR:
    case ACL_MDL_DYNAMIC_TASK_PTR:
    case ACL_MDL_FIFO_PTR: return sizeof(void *);
    default: return sizeof(size_t);
    }
}

STUB_API aclError aclmdlSetConfigOpt(aclmdlConfigHandle *handle, aclmdlConfigAttr attr, const void *attrValue,
                                     size_t valueSize) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclmdlConfigHandle *c = get_config(handle);
    if (!c) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown config handle %p", handle));
    if ((int)attr < 0 || (int)attr >= NUM_ATTRS)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "undefined attribute %d", (int)attr));
    if (!attrValue) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "attrValue is NULL"));
    if (valueSize != attr_size((int)attr))
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "attribute %d takes %zu bytes, not %zu", (int)attr,
                                attr_size((int)attr), valueSize));
    uint64_t v = 0;
    memcpy(&v, attrValue, valueSize);
    if (attr == ACL_MDL_PRIORITY_INT32 && (uint32_t)v > 7) /* negative too */
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "priority %d is outside [0, 7]", (int32_t)v));
    if (attr == ACL_MDL_LOAD_TYPE_SIZET && (v < ACL_MDL_LOAD_FROM_FILE || v > ACL_MDL_LOAD_FROM_MEM_WITH_Q))
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "load type %llu is not 1-6", (unsigned long long)v));
    unsigned mods = ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH | ACL_MEM_ACCESS_USER_SPACE_READONLY;
    if (attr == ACL_MDL_MEM_MALLOC_POLICY_SIZET && (v & ~(uint64_t)mods) > ACL_MEM_MALLOC_HUGE1G_ONLY_P2P)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "undefined memory policy 0x%llx", (unsigned long long)v));
    if (attr == ACL_MDL_WORKSPACE_MEM_OPTIMIZE && v > 1)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "workspace optimization %llu is not 0 or 1",
                                (unsigned long long)v));
    if (attr == ACL_MDL_PATH_PTR) {
        const char *s = (const char *)(uintptr_t)v;
        char *dup = s ? strdup(s) : NULL;
        if (s && !dup) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
        free(c->path);
        c->path = dup;
    }
    c->val[attr] = v;
    c->set |= 1ull << attr;
    LOCKED_RETURN(ACL_SUCCESS);
}

static int has(const aclmdlConfigHandle *c, int attr) { return (c->set >> attr) & 1; }

static aclError read_file(const char *fn, const char *path, char **data, size_t *size) {
    FILE *f = path ? fopen(path, "rb") : NULL;
    /* hicann/ge runtime/om2/om2_model_executor.cc:1721-1732 */
    if (!f) return stub_fail(ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID, fn, "cannot open model file %s", path ? path : "(NULL)");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n > 0 ? malloc((size_t)n) : NULL;
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        fclose(f);
        return stub_fail(ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID, fn, "cannot read model file %s", path);
    }
    fclose(f);
    *data = b;
    *size = (size_t)n;
    return ACL_SUCCESS;
}

STUB_API aclError aclmdlLoadWithConfig(const aclmdlConfigHandle *handle, uint32_t *modelId) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *ctx;
    aclError r = need_ge_ctx(__func__, &ctx);
    if (r) LOCKED_RETURN(r);
    const aclmdlConfigHandle *c = get_config(handle);
    if (!c) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown config handle %p", handle));
    if (!has(c, ACL_MDL_LOAD_TYPE_SIZET))
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "ACL_MDL_LOAD_TYPE_SIZET is not set"));
    uint64_t type = c->val[ACL_MDL_LOAD_TYPE_SIZET];
    int from_file = type == ACL_MDL_LOAD_FROM_FILE || type == ACL_MDL_LOAD_FROM_FILE_WITH_MEM;
    int with_mem = type == ACL_MDL_LOAD_FROM_FILE_WITH_MEM || type == ACL_MDL_LOAD_FROM_MEM_WITH_MEM;
    if (type == ACL_MDL_LOAD_FROM_FILE_WITH_Q || type == ACL_MDL_LOAD_FROM_MEM_WITH_Q)
        LOCKED_RETURN(stub_fail(ACL_ERROR_FEATURE_UNSUPPORTED, __func__, "queue load types are not supported"));
    if (type < ACL_MDL_LOAD_FROM_FILE || type > ACL_MDL_LOAD_FROM_MEM_WITH_MEM)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "undefined load type %llu", (unsigned long long)type));
    int need[4] = {from_file ? ACL_MDL_PATH_PTR : ACL_MDL_MEM_ADDR_PTR, from_file ? ACL_MDL_PATH_PTR : ACL_MDL_MEM_SIZET,
                   ACL_MDL_WORKSPACE_ADDR_PTR, ACL_MDL_WEIGHT_ADDR_PTR};
    for (int i = 0; i < (with_mem ? 4 : 2); i++)
        if (!has(c, need[i]))
            LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "attribute %d is required by load type %llu",
                                    need[i], (unsigned long long)type));
    char *file = NULL;
    const void *data = NULL;
    size_t size = 0;
    if (from_file) {
        if ((r = read_file(__func__, c->path, &file, &size))) LOCKED_RETURN(r);
        data = file;
    } else {
        data = (const void *)(uintptr_t)c->val[ACL_MDL_MEM_ADDR_PTR];
        size = c->val[ACL_MDL_MEM_SIZET];
    }
    parsed pm;
    r = parse(__func__, data, size, &pm);
    if (!r)
        r = load(__func__, ctx, &pm, modelId, (void *)(uintptr_t)c->val[ACL_MDL_WORKSPACE_ADDR_PTR],
                 c->val[ACL_MDL_WORKSPACE_SIZET], (void *)(uintptr_t)c->val[ACL_MDL_WEIGHT_ADDR_PTR],
                 c->val[ACL_MDL_WEIGHT_SIZET], with_mem);
    free(file);
    LOCKED_RETURN(r);
}

/* ---- descriptions ---- */

static aclmdlDesc *get_desc(const aclmdlDesc *h) { return h ? table_get(&g_descs, DESC_BASE, (uintptr_t)h) : NULL; }

/* io_at returns io i of a filled description, or NULL. */
static const io *io_at(const aclmdlDesc *h, size_t i, int out) {
    aclmdlDesc *d = get_desc(h);
    if (!d || !d->filled || i >= d->n) return NULL;
    return out ? &d->out[i] : &d->in[i];
}

STUB_API aclmdlDesc *aclmdlCreateDesc(void) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    aclmdlDesc *d = calloc(1, sizeof *d);
    uintptr_t h = d ? table_add(&g_descs, DESC_BASE, d) : 0;
    if (!h) {
        free(d);
        stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory");
    }
    pthread_mutex_unlock(&g_mu);
    return (aclmdlDesc *)h;
}

STUB_API aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclmdlDesc *d = get_desc(modelDesc);
    if (!d) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown description %p", modelDesc));
    g_descs.slot[((uintptr_t)modelDesc - DESC_BASE) / HANDLE_STEP - 1] = NULL;
    free(d);
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_ge(__func__);
    if (r) LOCKED_RETURN(r);
    aclmdlDesc *d = get_desc(modelDesc);
    if (!d) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown description %p", modelDesc));
    model *m = find_model(modelId);
    if (!m) LOCKED_RETURN(stub_fail(GE_EXEC_MODEL_ID_INVALID, __func__, "no loaded model %u", modelId));
    d->filled = 1;
    d->n = m->n;
    memcpy(d->in, m->in, sizeof d->in);
    memcpy(d->out, m->out, sizeof d->out);
    d->ngears = m->ngears;
    d->model_id = m->id;
    memcpy(d->gears, m->gears, sizeof d->gears);
    LOCKED_RETURN(ACL_SUCCESS);
}

static size_t num_io(aclmdlDesc *h) {
    if (stub_enter()) return 0;
    pthread_mutex_lock(&g_mu);
    aclmdlDesc *d = get_desc(h);
    size_t n = d && d->filled ? d->n : 0;
    pthread_mutex_unlock(&g_mu);
    return n;
}

STUB_API size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc) { return num_io(modelDesc); }
STUB_API size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc) { return num_io(modelDesc); }

static size_t io_size(aclmdlDesc *h, size_t i, int out) {
    if (stub_enter()) return 0;
    pthread_mutex_lock(&g_mu);
    const io *p = io_at(h, i, out);
    size_t n = p ? p->bytes : 0;
    pthread_mutex_unlock(&g_mu);
    return n;
}

STUB_API size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index) { return io_size(modelDesc, index, 0); }
STUB_API size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index) { return io_size(modelDesc, index, 1); }

static aclError io_dims(const char *fn, const aclmdlDesc *h, size_t i, aclmdlIODims *dims, int out) {
    pthread_mutex_lock(&g_mu);
    if (!dims) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "dims is NULL"));
    const io *p = io_at(h, i, out);
    if (!p) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "NULL or unfilled description, or index %zu out of range", i));
    memset(dims, 0, sizeof *dims);
    snprintf(dims->name, sizeof dims->name, "%s", p->name);
    dims->dimCount = p->ndims;
    for (uint64_t k = 0; k < p->ndims; k++) dims->dims[k] = p->dims[k];
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
    ENTER();
    return io_dims(__func__, modelDesc, index, dims, 0);
}

STUB_API aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
    ENTER();
    return io_dims(__func__, modelDesc, index, dims, 1);
}

/* The returned name lives as long as the description (as in ACL). */
static const char *io_name(const aclmdlDesc *h, size_t i, int out) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    const io *p = io_at(h, i, out);
    pthread_mutex_unlock(&g_mu);
    return p ? p->name : NULL;
}

STUB_API const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index) {
    return io_name(modelDesc, index, 0);
}
STUB_API const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index) {
    return io_name(modelDesc, index, 1);
}

STUB_API aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    if (!name || !index) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL argument"));
    aclmdlDesc *d = get_desc(modelDesc);
    if (!d || !d->filled)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL, unknown or unfilled description %p", modelDesc));
    for (uint32_t k = 0; k < d->n; k++) {
        if (strcmp(d->in[k].name, name) == 0) {
            *index = k;
            LOCKED_RETURN(ACL_SUCCESS);
        }
    }
    LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "no input named \"%s\"", name));
}

static int32_t io_field(const aclmdlDesc *h, size_t i, int out, int format) {
    if (stub_enter()) return -1;
    pthread_mutex_lock(&g_mu);
    const io *p = io_at(h, i, out);
    int32_t v = p ? (format ? p->format : p->dtype) : -1; /* ACL_DT_UNDEFINED, ACL_FORMAT_UNDEFINED */
    pthread_mutex_unlock(&g_mu);
    return v;
}

STUB_API aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index) {
    return (aclDataType)io_field(modelDesc, index, 0, 0);
}
STUB_API aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index) {
    return (aclDataType)io_field(modelDesc, index, 1, 0);
}
STUB_API aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index) {
    return (aclFormat)io_field(modelDesc, index, 0, 1);
}
STUB_API aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index) {
    return (aclFormat)io_field(modelDesc, index, 1, 1);
}

/* ---- data buffers and datasets ---- */

static aclDataBuffer *get_dbuf(const aclDataBuffer *h) { return h ? table_get(&g_dbufs, DBUF_BASE, (uintptr_t)h) : NULL; }
int dbuf_get(const aclDataBuffer *h, void **data, size_t *size) {
    aclDataBuffer *b = get_dbuf(h);
    if (!b) return 0;
    *data = b->data;
    *size = b->size;
    return 1;
}

static aclmdlDataset *get_dataset(const aclmdlDataset *h) {
    return h ? table_get(&g_datasets, DATASET_BASE, (uintptr_t)h) : NULL;
}

STUB_API aclDataBuffer *aclCreateDataBuffer(void *data, size_t size) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    aclDataBuffer *b = calloc(1, sizeof *b);
    uintptr_t h = b ? table_add(&g_dbufs, DBUF_BASE, b) : 0;
    if (!h) {
        free(b);
        stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory");
    } else {
        b->data = data;
        b->size = size;
    }
    pthread_mutex_unlock(&g_mu);
    return (aclDataBuffer *)h;
}

STUB_API aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclDataBuffer *b = get_dbuf(dataBuffer);
    if (!b) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown data buffer %p", dataBuffer));
    g_dbufs.slot[((uintptr_t)dataBuffer - DBUF_BASE) / HANDLE_STEP - 1] = NULL;
    free(b);
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclDataBuffer *b = get_dbuf(dataBuffer);
    if (!b) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown data buffer %p", dataBuffer));
    b->data = data;
    b->size = size;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    aclDataBuffer *b = get_dbuf(dataBuffer);
    void *p = b ? b->data : NULL;
    pthread_mutex_unlock(&g_mu);
    return p;
}

STUB_API size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer) {
    if (stub_enter()) return 0;
    pthread_mutex_lock(&g_mu);
    aclDataBuffer *b = get_dbuf(dataBuffer);
    size_t n = b ? b->size : 0;
    pthread_mutex_unlock(&g_mu);
    return n;
}

STUB_API aclmdlDataset *aclmdlCreateDataset(void) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    aclmdlDataset *d = calloc(1, sizeof *d);
    uintptr_t h = d ? table_add(&g_datasets, DATASET_BASE, d) : 0;
    if (!h) {
        free(d);
        stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory");
    }
    pthread_mutex_unlock(&g_mu);
    return (aclmdlDataset *)h;
}

/* Destroying a dataset leaves its data buffers alone, as in ACL. */
STUB_API aclError aclmdlDestroyDataset(const aclmdlDataset *dataset) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclmdlDataset *d = get_dataset(dataset);
    if (!d) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown dataset %p", dataset));
    g_datasets.slot[((uintptr_t)dataset - DATASET_BASE) / HANDLE_STEP - 1] = NULL;
    for (size_t k = 0; k < d->n; k++) tdesc_free(d->descs[k]);
    free(d->bufs);
    free(d->descs);
    free(d);
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclmdlDataset *d = get_dataset(dataset);
    if (!d) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown dataset %p", dataset));
    if (!get_dbuf(dataBuffer))
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown data buffer %p", dataBuffer));
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 4;
        uintptr_t *b = realloc(d->bufs, cap * sizeof *b);
        if (!b) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
        d->bufs = b;
        uintptr_t *t = realloc(d->descs, cap * sizeof *t);
        if (!t) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
        d->descs = t;
        d->cap = cap;
    }
    d->descs[d->n] = 0;
    d->bufs[d->n++] = (uintptr_t)dataBuffer;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset) {
    if (stub_enter()) return 0;
    pthread_mutex_lock(&g_mu);
    aclmdlDataset *d = get_dataset(dataset);
    size_t n = d ? d->n : 0;
    pthread_mutex_unlock(&g_mu);
    return n;
}

STUB_API aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    aclmdlDataset *d = get_dataset(dataset);
    uintptr_t b = d && index < d->n ? d->bufs[index] : 0;
    pthread_mutex_unlock(&g_mu);
    return (aclDataBuffer *)b;
}

/* ---- execution ---- */

typedef struct run {
    model *m;
    uint32_t id;
    void *in[MAX_IO], *out[MAX_IO];
    size_t nin[MAX_IO], nout[MAX_IO]; /* bytes to touch: buffers may be up to SIZE_SLACK short */
} run;

/* bind_io resolves the buffers of a dataset into addresses the stub can
 * touch, checking count, sizes and memory. For aclmdlExecute an output
 * buffer with a NULL address and size 0 gets device memory of the output's
 * size (the caller frees it with aclrtFree). */
/* Execution faults bind_io finds (docs/misuse.md): a host buffer the tasks
 * address as device memory, and a plain host buffer an asynchronous
 * execution copies with a device-to-device DMA. */
enum { FAULT_CORE = 1, FAULT_DMA = 2 };

static aclError bind_io(const char *fn, const aclmdlDataset *h, const model *m, int out, int async, const size_t *need,
                        void **addr, size_t *touch, int *fault) {
    const char *what = out ? "output" : "input";
    const io *ios = out ? m->out : m->in;
    aclmdlDataset *d = get_dataset(h);
    if (!d) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "NULL or unknown %s dataset %p", what, h);
    /* UpdateAllNodeArgs under GE_ASSERT_SUCCESS: E13025 is logged, the
     * caller gets ACL_ERROR_GE_FAILURE (hicann/ge davinci_model.cc:6673,
     * api/acl/common/error_codes_inner.h:24-28). */
    if (d->n != m->n)
        return stub_fail(ACL_ERROR_GE_FAILURE, fn,
                         "E13025: The number of inputs or outputs provided by the user is inconsistent with that "
                         "required by the model: %zu %s buffers, the model has %u",
                         d->n, what, m->n);
    for (uint32_t k = 0; k < m->n; k++) {
        aclDataBuffer *b = get_dbuf((aclDataBuffer *)d->bufs[k]);
        if (!b) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "%s buffer %u was destroyed", what, k);
        /* Only aclmdlExecute allocates (hicann/ge api/acl/acl_model/model/
         * model.cpp:781, !basync; 633, 696 for runtime v2): asynchronously
         * the empty buffer meets the size rule and the NULL check below. */
        if (out && !async && !b->data && b->size == 0) {
            void *p;
            if (dev_alloc(m->device, need[k], &p) != 0)
                return stub_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "no device memory for output %u (%zu bytes)", k,
                                 need[k]);
            b->data = p;
            b->size = need[k];
        }
        /* An unknown-dim IO's buffer must hold the run's real shape: the
         * runtime v2 copy of an output to a shorter buffer fails with
         * GRAPH_FAILED (hicann/ge runtime/v2/kernel/common_kernel_impl/
         * memory_copy.cc:566-571), which ACL returns as ACL_ERROR_GE_FAILURE
         * (model.cpp:668-671, error_codes_inner.h:24-28). */
        if (ios[k].dynamic && b->size < need[k])
            return stub_fail(ACL_ERROR_GE_FAILURE, fn, "%s %u (%s): given buffer size %zu is less than the %s tensor size %zu",
                             what, k, ios[k].name, b->size, what, need[k]);
        if (b->size + SIZE_SLACK < need[k])
            return stub_fail(ACL_ERROR_GE_FAILURE, fn, "E13025: %s %u (%s): buffer of %zu bytes, the model needs %zu", what,
                             k, ios[k].name, b->size, need[k]);
        if (!b->data) return stub_fail(GE_EXEC_MODEL_ADDR_INVALID, fn, "%s %u (%s): NULL address", what, k, ios[k].name);
        int copied = out && (m->copy >> k & 1);
        /* A copied output is copied whole: CopyOutputData fails on a shorter
         * buffer (hicann/ge davinci_model.cc:5054) and the execute returns
         * ACL_ERROR_GE_INTERNAL_ERROR (davinci_model.cc:7911). */
        if (copied && b->size < ios[k].bytes)
            return stub_fail(ACL_ERROR_GE_INTERNAL_ERROR, fn,
                             "output %u (%s): the buffer of %zu bytes is smaller than the %zu bytes copied out to it", k,
                             ios[k].name, b->size, ios[k].bytes);
        size_t n_touch = b->size < need[k] ? b->size : need[k];
        classified c;
        classify(b->data, n_touch, &c);
        if ((c.kind == MK_DEVICE || c.kind == MK_DEVFREE) && c.device != m->device)
            return stub_fail(GE_EXEC_MODEL_ADDR_INVALID, fn, "%s %u (%s): %p is memory of device %d, the model is on %d",
                             what, k, ios[k].name, b->data, c.device, m->device);
        /* The ACL layer marks every IO as device memory (hicann/ge
         * api/acl/acl_model/model/model.cpp:750, 777); the access to memory
         * that is not a live allocation fails: docs/misuse.md, 145007. */
        if (c.kind == MK_DEVFREE || !c.in_range)
            return stub_fail(GE_EXEC_MODEL_ADDR_INVALID, fn, "%s %u (%s): %p+%zu is not inside a live allocation", what,
                             k, ios[k].name, b->data, n_touch);
        /* Host memory (pinned or plain) is passed as device memory too
         * (model.cpp:750, 777). Addressed by the tasks, it faults when they
         * run (ACL_ERROR_RT_AICORE_EXCEPTION); copied, the copy is
         * ACL_MEMCPY_DEVICE_TO_DEVICE: synchronous it goes by the pointers,
         * asynchronous it is corrected for pinned memory and a DMA of a
         * pageable address for plain memory (ACL_ERROR_RT_SYS_DMA;
         * hicann/runtime api_error.cc:2695-2719, 2789-2802). */
        if (!copied && (c.kind == MK_PINNED || c.kind == MK_PLAIN)) *fault |= FAULT_CORE;
        if (copied && async && c.kind == MK_PLAIN) *fault |= FAULT_DMA;
        addr[k] = c.host;
        touch[k] = n_touch;
    }
    return ACL_SUCCESS;
}

/* check_reuse is GE's CheckIoReuseAddrs inside UpdateAllNodeArgs: output k
 * of a reuse pair must have input k's address. Like every check there it
 * reaches the caller as ACL_ERROR_GE_FAILURE; the message is what GE logs
 * (hicann/ge base/common/util.cc:585-590; davinci_model.cc:6673,
 * api/acl/common/error_codes_inner.h:24-28). It runs after the IO counts and before the per-IO checks; with
 * a count or dataset wrong it leaves the report to bind_io. */
static aclError check_reuse(const char *fn, const aclmdlDataset *in, const aclmdlDataset *out, const model *m) {
    aclmdlDataset *di = get_dataset(in), *dout = get_dataset(out);
    if (!m->reuse || !di || !dout || di->n != m->n || dout->n != m->n) return ACL_SUCCESS;
    for (uint32_t k = 0; k < m->n; k++) {
        if (!(m->reuse >> k & 1)) continue;
        aclDataBuffer *bi = get_dbuf((aclDataBuffer *)di->bufs[k]), *bo = get_dbuf((aclDataBuffer *)dout->bufs[k]);
        if (bi && bo && bi->data != bo->data)
            return stub_fail(ACL_ERROR_GE_FAILURE, fn,
                             "Output[%u] address(%p) must be same as Input[%u] address(%p) because the option "
                             "'ge.exec.outputReuseInputMemIndexes' is set with value containing '%u,%u', addr reuse "
                             "check not pass",
                             k, bo->data, k, bi->data, k, k);
    }
    return ACL_SUCCESS;
}

/* call_touches reports whether a queued execution uses [lo, hi): its IO,
 * or the caller's work and weight memory. */
int call_touches(const void *arg, const char *lo, const char *hi) {
    const run *r = arg;
    model *m = find_model(r->id);
    if (m != r->m) return 0;
    if (!m->owns && ((m->work < hi && lo < m->work + m->work_size) || (m->weight < hi && lo < m->weight + m->weight_size)))
        return 1;
    for (uint32_t k = 0; k < m->n; k++) {
        const char *in = r->in[k], *out = r->out[k];
        if ((in < hi && lo < in + r->nin[k]) || (out < hi && lo < out + r->nout[k])) return 1;
    }
    return 0;
}

/* run_model executes (go != 0) or drops a run, and frees it. */
static void run_model(void *arg, int go) {
    run *r = arg;
    model *m = find_model(r->id);
    if (m != r->m) m = NULL; /* unloaded meanwhile */
    if (m && go) {
        for (uint32_t k = 0; k < m->n; k++) {
            size_t elems = (r->nin[k] < r->nout[k] ? r->nin[k] : r->nout[k]) / 4;
            const char *slot = m->weight + 8 * k;
            if (m->in[k].dtype == ACL_FLOAT) {
                float a, x;
                memcpy(&a, slot, 4);
                for (size_t j = 0; j < elems; j++) {
                    memcpy(&x, (char *)r->in[k] + 4 * j, 4);
                    x += a;
                    memcpy((char *)r->out[k] + 4 * j, &x, 4);
                }
            } else {
                int32_t a, x;
                memcpy(&a, slot, 4);
                for (size_t j = 0; j < elems; j++) {
                    memcpy(&x, (char *)r->in[k] + 4 * j, 4);
                    x = (int32_t)((uint32_t)x + (uint32_t)a);
                    memcpy((char *)r->out[k] + 4 * j, &x, 4);
                }
            }
        }
        uint64_t count;
        memcpy(&count, m->work, 8);
        count++;
        memcpy(m->work, &count, 8);
    }
    if (m && m->pending && --m->pending == 0) {
        m->pending_stream = NULL;
        pthread_cond_broadcast(&g_cv); /* an Unload may wait */
    }
    free(r);
}

/* The descriptions the stub was given, per dynamic-model execution (a
 * ring of the last DESC_LOG), for stub_exec_desc. */
#define DESC_LOG 64
static struct {
    uint32_t n;
    int32_t dt[MAX_IO], format[MAX_IO];
    int ndims[MAX_IO];
    int64_t dims[MAX_IO][MAX_DIMS];
} g_desc_log[DESC_LOG];
static uint64_t g_desc_runs;

/* dyn_shapes resolves each input's real dims for one run of a model with
 * unknown dims, as GE's runtime v2 execute does: an input with a tensor
 * description on the dataset takes its dims (hicann/ge api/acl/acl_model/
 * model/model.cpp:555-562); one without keeps the model's -1 dims, which
 * the range check lets through (graph_metadef/graph/utils/tensor_utils.cc:
 * 375-378) and the execution cannot size: a GE status outside the ACL
 * ranges, ACL_ERROR_GE_FAILURE (model.cpp:668-671, error_codes_inner.h:
 * 24-28). Dims outside the input's range, or a rank other than the
 * model's, are ACL_ERROR_INVALID_PARAM (model.cpp:619-621;
 * tensor_utils.cc:362-371, 391-420). A dataset of the wrong size is left
 * to bind_io. need gets each IO's bytes. */
static aclError dyn_shapes(const char *fn, const aclmdlDataset *h, const model *m, int64_t dims[][MAX_DIMS],
                           int *ndims, size_t *need, int32_t *dts, int32_t *formats) {
    aclmdlDataset *d = get_dataset(h);
    for (uint32_t k = 0; k < m->n; k++) {
        const io *p = &m->in[k];
        ndims[k] = (int)p->ndims;
        memcpy(dims[k], p->dims, sizeof dims[k]);
        need[k] = p->bytes;
        dts[k] = p->dtype;
        formats[k] = p->format;
        if (!p->dynamic || !d || d->n != m->n) continue;
        int32_t dt, format;
        int64_t got[MAX_DIMS];
        int nd = d->descs[k] ? tdesc_read(d->descs[k], &dt, &format, got) : -1;
        if (nd < 0)
            return stub_fail(ACL_ERROR_GE_FAILURE, fn,
                             "input %u (%s) has unknown dims and the dataset gives no tensor description for it "
                             "(aclmdlSetDatasetTensorDesc)", k, p->name);
        if ((uint64_t)nd != p->ndims)
            return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "Input [%u] shape out of shape range: rank %d, the model's is %llu",
                             k, nd, (unsigned long long)p->ndims);
        size_t e = 1;
        for (int i = 0; i < nd; i++) {
            if (got[i] < p->lo[i] || (p->hi[i] != -1 && got[i] > p->hi[i]) || got[i] > (1 << 28))
                return stub_fail(ACL_ERROR_INVALID_PARAM, fn,
                                 "Input [%u] shape out of shape range: dim %d is %lld, the range is [%lld, %lld]", k, i,
                                 (long long)got[i], (long long)p->lo[i], (long long)p->hi[i]);
            e *= (size_t)got[i];
            if (e > ((size_t)1 << 32))
                return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "Input [%u] shape out of shape range: too many elements", k);
        }
        memcpy(dims[k], got, sizeof got);
        need[k] = e * dtype_size(p->dtype);
        dts[k] = dt; /* as given: the record shows what the caller passed */
        formats[k] = format;
    }
    return ACL_SUCCESS;
}

/* log_descs records the dims a dynamic run was given and sets each
 * output's real shape (input k's) on the output dataset, as GE does after
 * the execute call (model.cpp:672-693). */
static aclError log_descs(const char *fn, aclmdlDataset *output, const model *m, int64_t dims[][MAX_DIMS], const int *ndims,
                          const int32_t *dts, const int32_t *formats) {
    uint64_t slot = g_desc_runs % DESC_LOG;
    g_desc_log[slot].n = m->n;
    for (uint32_t k = 0; k < m->n; k++) {
        g_desc_log[slot].dt[k] = dts[k];
        g_desc_log[slot].format[k] = formats[k];
        g_desc_log[slot].ndims[k] = ndims[k];
        memcpy(g_desc_log[slot].dims[k], dims[k], sizeof dims[k]);
    }
    g_desc_runs++;
    aclmdlDataset *d = get_dataset(output);
    for (uint32_t k = 0; d && k < m->n && k < d->n; k++) {
        tdesc_free(d->descs[k]);
        if (!(d->descs[k] = tdesc_make(m->out[k].dtype, m->out[k].format, ndims[k], dims[k])))
            return stub_fail(ACL_ERROR_BAD_ALLOC, fn, "out of host memory");
    }
    return ACL_SUCCESS;
}

/* stub_dyn_runs counts the dynamic-model executions since the stub was
 * loaded; stub_exec_desc reads input k of run r (0-based, one of the last
 * 64): the dims (into 8 slots), data type and format of the description
 * the run was given (the model's for an input without one), and returns
 * the dims count, -1 when there is no such record. */
STUB_API uint64_t stub_dyn_runs(void) {
    pthread_mutex_lock(&g_mu);
    uint64_t n = g_desc_runs;
    pthread_mutex_unlock(&g_mu);
    return n;
}

STUB_API int stub_exec_desc(uint64_t r, uint32_t k, int64_t *dims, int32_t *dt, int32_t *format) {
    pthread_mutex_lock(&g_mu);
    int nd = -1;
    if (r < g_desc_runs && r + DESC_LOG >= g_desc_runs && k < g_desc_log[r % DESC_LOG].n) {
        nd = g_desc_log[r % DESC_LOG].ndims[k];
        memcpy(dims, g_desc_log[r % DESC_LOG].dims[k], 8 * (size_t)nd);
        *dt = g_desc_log[r % DESC_LOG].dt[k];
        *format = g_desc_log[r % DESC_LOG].format[k];
    }
    pthread_mutex_unlock(&g_mu);
    return nd;
}

static aclError execute(const char *fn, uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
                        aclrtStream stream, int async) {
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_ge_ctx(fn, &c);
    if (r) LOCKED_RETURN(r);
    model *m = find_model(modelId);
    if (!m) LOCKED_RETURN(stub_fail(GE_EXEC_MODEL_ID_INVALID, fn, "no loaded model %u", modelId));
    stub_stream *s = NULL;
    if (async && (r = resolve_stream(fn, stream, 1, &s))) LOCKED_RETURN(r);
    /* One kind of execution per model (hicann/ge davinci_model.cc:7636-7638). */
    if (m->mode && m->mode != (async ? 2 : 1))
        LOCKED_RETURN(stub_fail(ACL_ERROR_GE_FAILURE, fn, "model %u: NnExecute not support mix execute", modelId));
    if (m->pending && (!async || m->pending_stream != s))
        LOCKED_RETURN(stub_fail(RT_MODEL_EXECUTE, fn, "model %u is already executing on another stream", modelId));
    run *x = calloc(1, sizeof *x);
    if (!x) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, fn, "out of host memory"));
    x->m = m;
    x->id = modelId;
    int fault = 0;
    int64_t dims[MAX_IO][MAX_DIMS];
    int ndims[MAX_IO];
    size_t need[MAX_IO];
    int32_t dts[MAX_IO], formats[MAX_IO];
    if ((r = dyn_shapes(fn, input, m, dims, ndims, need, dts, formats)) || (r = check_reuse(fn, input, output, m)) ||
        (r = bind_io(fn, input, m, 0, async, need, x->in, x->nin, &fault)) ||
        (r = bind_io(fn, output, m, 1, async, need, x->out, x->nout, &fault))) {
        free(x);
        LOCKED_RETURN(r);
    }
    /* The runtime refuses a model of another context at aclmdlRIExecute*,
     * after GE's IO checks (hicann/runtime api_impl.cc:4413-4445,
     * error_message_manage.hpp:328-334; errcode_manage.cc:178 → 107004). */
    if (c != m->ctx) {
        free(x);
        LOCKED_RETURN(stub_fail(RT_MODEL_CONTEXT, fn, "model %u was loaded in another context (device %d; current on %d)",
                                modelId, m->device, c->device));
    }
    if (m->dynamic && (r = log_descs(fn, output, m, dims, ndims, dts, formats))) {
        free(x);
        LOCKED_RETURN(r);
    }
    m->mode = async ? 2 : 1;
    if (!async) {
        run_model(x, !fault);
        if (fault)
            LOCKED_RETURN(stub_fail(RT_AICORE_EXCEPTION, fn,
                                    "model %u: an IO buffer is host memory, which the tasks address as device memory",
                                    modelId));
        LOCKED_RETURN(ACL_SUCCESS);
    }
    m->pending++;
    m->pending_stream = s;
    task t = {.type = TASK_CALL, .fn = run_model, .arg = x,
              .fail = fault & FAULT_DMA ? RT_SYS_DMA : fault & FAULT_CORE ? RT_AICORE_EXCEPTION : 0};
    if ((r = enqueue(s, &t))) run_model(x, 0); /* not queued: undo */
    LOCKED_RETURN(r);
}

STUB_API aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output) {
    ENTER();
    return execute(__func__, modelId, input, output, NULL, 0);
}

#ifndef STUB_OMIT_OPTIONAL
STUB_API aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
                                     aclrtStream stream) {
    ENTER();
    return execute(__func__, modelId, input, output, stream, 1);
}
#endif

/* ---- dynamic batch (hicann/ge api/acl/acl_model/model/model_om2.cpp and
 * model.cpp, runtime/v1/executor/ge_executor.cc) ---- */

STUB_API aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclmdlDesc *d = get_desc(modelDesc);
    if (!d || !batch) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown argument"));
    batch->batchCount = d->filled ? d->ngears : 0;
    for (size_t k = 0; k < batch->batchCount; k++) batch->batch[k] = d->gears[k];
    LOCKED_RETURN(ACL_SUCCESS);
}

/* The stub's models have no dynamic dims: 0 gears, as for a static or a
 * dynamic-batch model on the device. */
STUB_API aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc *modelDesc, size_t index, size_t *gearCount) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    if (!get_desc(modelDesc) || !gearCount)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown argument"));
    if (index != (size_t)-1) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "index must be -1 while input is %zu", index));
    *gearCount = 0;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclmdlGetInputDynamicDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims, size_t gearCount) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    (void)gearCount;
    if (!get_desc(modelDesc) || !dims) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown argument"));
    if (index != (size_t)-1) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "index must be -1 but it is %zu", index));
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index, uint64_t batchSize) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclmdlDataset *ds = get_dataset(dataset);
    if (!ds) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown dataset"));
    if (batchSize == 0) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "batchSize can't be zero"));
    aclDataBuffer *b = index < ds->n ? get_dbuf((const aclDataBuffer *)ds->bufs[index]) : NULL;
    if (!b) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "no data buffer at index %zu", index));
    if (!b->data) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "data buffer addr cannot be null"));
    if (b->size < 4)
        LOCKED_RETURN(stub_fail(GE_DYNAMIC_INPUT_LENGTH_INVALID, __func__, "dynamic input size %zu is less than 4", b->size));
    model *m = find_model(modelId);
    if (!m) LOCKED_RETURN(stub_fail(GE_EXEC_MODEL_ID_INVALID, __func__, "no loaded model %u", modelId));
    int ok = 0;
    for (uint32_t k = 0; k < m->ngears; k++) ok |= m->gears[k] == batchSize;
    if (!ok)
        LOCKED_RETURN(stub_fail(GE_DYNAMIC_BATCH_SIZE_INVALID, __func__, "dynamic batch %llu cannot match the gear of model %u",
                                (unsigned long long)batchSize, modelId));
    size_t n = b->size >= 8 ? 8 : 4;
    classified c;
    classify(b->data, n, &c);
    if (!c.in_range) LOCKED_RETURN(stub_fail(ACL_ERROR_RT_PARAM_INVALID, __func__, "buffer %p+%zu is not live memory", b->data, n));
    memcpy(c.host, &batchSize, n); /* little-endian: the low 4 bytes when n is 4 */
    m->cur_batch = batchSize;
    LOCKED_RETURN(ACL_SUCCESS);
}

/* The stub's gear changes dim 0 of every output to the batch chosen last.
 * A model with unknown dims runs on GE's runtime v2 executor, for which
 * the call is ACL_ERROR_API_NOT_SUPPORT, before the index check (hicann/ge
 * api/acl/acl_model/model/model.cpp:1981-1985). */
STUB_API aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclmdlDesc *dd = get_desc(modelDesc);
    model *dm = dd && dims ? find_model(dd->model_id) : NULL;
    if (dm && dm->dynamic)
        LOCKED_RETURN(stub_fail(ACL_ERROR_API_NOT_SUPPORT, __func__, "This api does not support dynamic model, please check."));
    pthread_mutex_unlock(&g_mu);
    aclError r = io_dims(__func__, modelDesc, index, dims, 1);
    if (r) return r;
    pthread_mutex_lock(&g_mu);
    aclmdlDesc *d = get_desc(modelDesc);
    model *m = d ? find_model(d->model_id) : NULL;
    if (!m) LOCKED_RETURN(stub_fail(GE_EXEC_MODEL_ID_INVALID, __func__, "the model is not loaded"));
    if (m->cur_batch && dims->dimCount > 0) dims->dims[0] = (int64_t)m->cur_batch;
    LOCKED_RETURN(ACL_SUCCESS);
}

#ifndef STUB_OMIT_OPTIONAL
/* ---- unknown dims (hicann/ge api/acl/acl_model/model/model_om2.cpp,
 * model.cpp) ---- */

/* The dataset keeps a copy of the description (model_om2.cpp:965-990): a
 * NULL one removes the entry's, an index past the buffers is
 * ACL_ERROR_INVALID_PARAM. */
STUB_API aclError aclmdlSetDatasetTensorDesc(aclmdlDataset *dataset, aclTensorDesc *tensorDesc, size_t index) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclmdlDataset *d = get_dataset(dataset);
    if (!d) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown dataset %p", (void *)dataset));
    if (index >= d->n)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__,
                                "input param index[%zu] must be smaller than input databuf size[%zu]", index, d->n));
    uintptr_t copy = 0;
    if (tensorDesc) {
        int32_t dt, format;
        int64_t dims[MAX_DIMS];
        int nd = tdesc_read((uintptr_t)tensorDesc, &dt, &format, dims);
        if (nd < 0) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "unknown tensor description %p", (void *)tensorDesc));
        if (!(copy = tdesc_make(dt, format, nd, dims))) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
    }
    tdesc_free(d->descs[index]);
    d->descs[index] = copy;
    LOCKED_RETURN(ACL_SUCCESS);
}

/* The dataset's own description, NULL for none or a bad argument
 * (model_om2.cpp:951-963). */
STUB_API aclTensorDesc *aclmdlGetDatasetTensorDesc(const aclmdlDataset *dataset, size_t index) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    aclmdlDataset *d = get_dataset(dataset);
    uintptr_t h = 0;
    if (!d || index >= d->n)
        stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown dataset, or index %zu out of range", index);
    else
        h = d->descs[index];
    pthread_mutex_unlock(&g_mu);
    return (aclTensorDesc *)h;
}

STUB_API aclError aclmdlGetInputDimsV2(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims) {
    ENTER();
    return io_dims(__func__, modelDesc, index, dims, 0);
}

/* GE's GetDimsRange (model_om2.cpp:471-541): none (rangeCount 0) for a
 * model with batch gears; each dim's range for an input of unknown dims;
 * [n, n] per dim of a static input. */
STUB_API aclError aclmdlGetInputDimsRange(const aclmdlDesc *modelDesc, size_t index, aclmdlIODimsRange *dimsRange) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    if (!dimsRange) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "dimsRange is NULL"));
    const io *p = io_at(modelDesc, index, 0);
    if (!p) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unfilled description, or index %zu out of range", index));
    memset(dimsRange, 0, sizeof *dimsRange);
    if (!get_desc(modelDesc)->ngears) {
        dimsRange->rangeCount = p->ndims;
        for (uint64_t k = 0; k < p->ndims; k++) {
            dimsRange->range[k][0] = p->lo[k];
            dimsRange->range[k][1] = p->hi[k];
        }
    }
    LOCKED_RETURN(ACL_SUCCESS);
}

/* The stub's models have no image-size gears (model_om2.cpp:1817-1843). */
STUB_API aclError aclmdlGetDynamicHW(const aclmdlDesc *modelDesc, size_t index, aclmdlHW *hw) {
    ENTER();
    (void)index;
    pthread_mutex_lock(&g_mu);
    if (!get_desc(modelDesc) || !hw) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown argument"));
    hw->hwCount = 0;
    LOCKED_RETURN(ACL_SUCCESS);
}

/* gear_buffer is the checks aclmdlSetDynamicHWSize and
 * aclmdlSetInputDynamicDims make on the dataset entry (model.cpp:1884-1901,
 * 1936-1945). */
static aclError gear_buffer(const char *fn, aclmdlDataset *dataset, size_t index, aclDataBuffer **out) {
    aclmdlDataset *ds = get_dataset(dataset);
    if (!ds) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "NULL or unknown dataset");
    aclDataBuffer *b = index < ds->n ? get_dbuf((const aclDataBuffer *)ds->bufs[index]) : NULL;
    if (!b) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "get data buffer by index[%zu] failed", index);
    if (!b->data) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "data buffer addr cannot be nullptr");
    *out = b;
    return ACL_SUCCESS;
}

/* GeExecutor::SetDynamicImageSize (hicann/ge runtime/v1/executor/
 * ge_executor.cc:434-475): under 8 bytes is
 * ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID; no image-size gear matches
 * (the stub's models have none) ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID. */
STUB_API aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset *dataset, size_t index, uint64_t height,
                                         uint64_t width) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    if (!get_dataset(dataset)) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown dataset"));
    if (!height || !width)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "height[%llu] or width[%llu] is invalid, can't be zero.",
                                (unsigned long long)height, (unsigned long long)width));
    aclDataBuffer *b;
    aclError r = gear_buffer(__func__, dataset, index, &b);
    if (r) LOCKED_RETURN(r);
    if (b->size < 8)
        LOCKED_RETURN(stub_fail(GE_DYNAMIC_INPUT_LENGTH_INVALID, __func__, "Dynamic input size [%zu] is less than [8]", b->size));
    if (!find_model(modelId)) LOCKED_RETURN(stub_fail(GE_EXEC_MODEL_ID_INVALID, __func__, "no loaded model %u", modelId));
    LOCKED_RETURN(stub_fail(GE_DYNAMIC_BATCH_SIZE_INVALID, __func__,
                            "dynamic image size %llux%llu cannot match the gear of model %u", (unsigned long long)height,
                            (unsigned long long)width, modelId));
}

/* GeExecutor::SetDynamicDims (ge_executor.cc:515-545, GetCurDynamicDims
 * 585-621): the dims given must number the inputs' dims of the model's
 * dims gears, none for the stub's models:
 * ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID. */
STUB_API aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index, const aclmdlIODims *dims) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    if (!get_dataset(dataset) || !dims) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown argument"));
    if (dims->dimCount == 0) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "dimCount[0] is invalid, can't be zero."));
    aclDataBuffer *b;
    aclError r = gear_buffer(__func__, dataset, index, &b);
    if (r) LOCKED_RETURN(r);
    if (!find_model(modelId)) LOCKED_RETURN(stub_fail(GE_EXEC_MODEL_ID_INVALID, __func__, "no loaded model %u", modelId));
    LOCKED_RETURN(stub_fail(GE_DYNAMIC_INPUT_LENGTH_INVALID, __func__,
                            "Dynamic input size [%zu] is not equal with all data dims size [0]", dims->dimCount));
}
#endif
