/* Stub libascendcl, single-op API (acl_op.h, acl_op_compiler.h and the
 * tensor descriptions of acl_base.h), over the stub's own small op set:
 *   Add, Mul  two float32 inputs of one shape, one output of that shape
 *   Relu      one float32 input, one output of its shape
 * Unknown ops, arities, attributes and outputs fail with ACL's op codes; the
 * op reads and writes the caller's device buffers in place on the stream. */
#include <stdlib.h>
#include <string.h>

#include "stub.h"

#define TDESC_BASE ((uintptr_t)9 << 40)
#define ATTR_BASE ((uintptr_t)10 << 40)
#define MAX_DIMS 8
#define MAX_ATTRS 16
#define MAX_IO 4

static const int ACL_ERROR_OP_INPUT_NOT_MATCH = 100021;
static const int ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022;
static const int ACL_ERROR_OP_ATTR_NOT_MATCH = 100023;
static const int ACL_ERROR_OP_NOT_FOUND = 100024;

typedef struct aclTensorDesc {
    aclDataType dt;
    aclFormat format;
    int ndims;
    int64_t dims[MAX_DIMS];
} aclTensorDesc;

typedef struct aclopAttr {
    int n;
    char names[MAX_ATTRS][64];
} aclopAttr;

static table g_tdescs, g_attrs;

static aclTensorDesc *get_tdesc(const aclTensorDesc *h) {
    return h ? table_get(&g_tdescs, TDESC_BASE, (uintptr_t)h) : NULL;
}
static aclopAttr *get_attr(const aclopAttr *h) { return h ? table_get(&g_attrs, ATTR_BASE, (uintptr_t)h) : NULL; }

STUB_API aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims, aclFormat format) {
    if (stub_enter()) return NULL;
    if (numDims < 0 || numDims > MAX_DIMS || (numDims > 0 && !dims)) {
        stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "numDims %d (dims %p)", numDims, (const void *)dims);
        return NULL;
    }
    pthread_mutex_lock(&g_mu);
    aclTensorDesc *d = calloc(1, sizeof *d);
    uintptr_t h = d ? table_add(&g_tdescs, TDESC_BASE, d) : 0;
    if (!h) {
        free(d);
        stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory");
    } else {
        d->dt = dataType;
        d->format = format;
        d->ndims = numDims;
        for (int i = 0; i < numDims; i++) d->dims[i] = dims[i];
    }
    pthread_mutex_unlock(&g_mu);
    return (aclTensorDesc *)h;
}

STUB_API void aclDestroyTensorDesc(const aclTensorDesc *desc) {
    if (stub_enter()) return;
    pthread_mutex_lock(&g_mu);
    aclTensorDesc *d = get_tdesc(desc);
    if (d) {
        g_tdescs.slot[((uintptr_t)desc - TDESC_BASE) / HANDLE_STEP - 1] = NULL;
        free(d);
    }
    pthread_mutex_unlock(&g_mu);
}

uintptr_t tdesc_make(int32_t dt, int32_t format, int ndims, const int64_t *dims) {
    if (ndims < 0 || ndims > MAX_DIMS) return 0;
    aclTensorDesc *d = calloc(1, sizeof *d);
    uintptr_t h = d ? table_add(&g_tdescs, TDESC_BASE, d) : 0;
    if (!h) {
        free(d);
        return 0;
    }
    d->dt = (aclDataType)dt;
    d->format = (aclFormat)format;
    d->ndims = ndims;
    for (int i = 0; i < ndims; i++) d->dims[i] = dims[i];
    return h;
}

int tdesc_read(uintptr_t h, int32_t *dt, int32_t *format, int64_t *dims) {
    aclTensorDesc *d = get_tdesc((const aclTensorDesc *)h);
    if (!d) return -1;
    *dt = d->dt;
    *format = d->format;
    for (int i = 0; i < d->ndims; i++) dims[i] = d->dims[i];
    return d->ndims;
}

void tdesc_free(uintptr_t h) {
    aclTensorDesc *d = get_tdesc((const aclTensorDesc *)h);
    if (d) {
        g_tdescs.slot[(h - TDESC_BASE) / HANDLE_STEP - 1] = NULL;
        free(d);
    }
}

#ifndef STUB_OMIT_OPTIONAL
/* Readers of a description (acl_base_mdl.h): the C failure values for a
 * NULL or unknown one. */
STUB_API aclDataType aclGetTensorDescType(const aclTensorDesc *desc) {
    if (stub_enter()) return ACL_DT_UNDEFINED;
    pthread_mutex_lock(&g_mu);
    aclTensorDesc *d = get_tdesc(desc);
    aclDataType v = d ? d->dt : ACL_DT_UNDEFINED;
    pthread_mutex_unlock(&g_mu);
    return v;
}

STUB_API aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc) {
    if (stub_enter()) return ACL_FORMAT_UNDEFINED;
    pthread_mutex_lock(&g_mu);
    aclTensorDesc *d = get_tdesc(desc);
    aclFormat v = d ? d->format : ACL_FORMAT_UNDEFINED;
    pthread_mutex_unlock(&g_mu);
    return v;
}

STUB_API size_t aclGetTensorDescNumDims(const aclTensorDesc *desc) {
    if (stub_enter()) return 0;
    pthread_mutex_lock(&g_mu);
    aclTensorDesc *d = get_tdesc(desc);
    size_t v = d ? (size_t)d->ndims : 0;
    /* ACL_UNKNOWN_RANK for dims [-2] (hicann/ge api/acl/acl_model/types/
     * tensor_desc_internal_om2.cpp:316-327) */
    if (d && d->ndims > 0 && d->dims[0] == -2) v = (size_t)0xFFFFFFFFFFFFFFFEull;
    pthread_mutex_unlock(&g_mu);
    return v;
}

STUB_API aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclTensorDesc *d = get_tdesc(desc);
    if (!d || !dimSize) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "NULL or unknown argument"));
    if (index >= (size_t)d->ndims)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "index %zu is not below the %d dims", index, d->ndims));
    *dimSize = d->dims[index];
    LOCKED_RETURN(ACL_SUCCESS);
}
#endif

STUB_API aclopAttr *aclopCreateAttr(void) {
    if (stub_enter()) return NULL;
    pthread_mutex_lock(&g_mu);
    aclopAttr *a = calloc(1, sizeof *a);
    uintptr_t h = a ? table_add(&g_attrs, ATTR_BASE, a) : 0;
    if (!h) {
        free(a);
        stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory");
    }
    pthread_mutex_unlock(&g_mu);
    return (aclopAttr *)h;
}

STUB_API void aclopDestroyAttr(const aclopAttr *attr) {
    if (stub_enter()) return;
    pthread_mutex_lock(&g_mu);
    aclopAttr *a = get_attr(attr);
    if (a) {
        g_attrs.slot[((uintptr_t)attr - ATTR_BASE) / HANDLE_STEP - 1] = NULL;
        free(a);
    }
    pthread_mutex_unlock(&g_mu);
}

/* set_attr records an attribute's name; the stub's ops take none, so any
 * attribute makes the op's attributes mismatch at execution. */
static aclError set_attr(const char *fn, aclopAttr *attr, const char *name) {
    pthread_mutex_lock(&g_mu);
    aclopAttr *a = get_attr(attr);
    if (!a) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "NULL or unknown op attr %p", (void *)attr));
    if (!name || !*name) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "attribute name is NULL or empty"));
    if (a->n == MAX_ATTRS) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, fn, "too many attributes"));
    strncpy(a->names[a->n++], name, 63);
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue) {
    ENTER();
    (void)attrValue;
    return set_attr(__func__, attr, attrName);
}
STUB_API aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue) {
    ENTER();
    (void)attrValue;
    return set_attr(__func__, attr, attrName);
}
STUB_API aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue) {
    ENTER();
    (void)attrValue;
    return set_attr(__func__, attr, attrName);
}
STUB_API aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue) {
    ENTER();
    if (!attrValue) return stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "attribute value is NULL");
    return set_attr(__func__, attr, attrName);
}
STUB_API aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues, const int64_t *values) {
    ENTER();
    if (numValues < 0 || (numValues > 0 && !values))
        return stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "numValues %d (values %p)", numValues, (const void *)values);
    return set_attr(__func__, attr, attrName);
}

typedef struct oprun {
    int relu;   /* else binary */
    int mul;    /* Add or Mul */
    size_t n;   /* elements */
    float *in[2], *out;
} oprun;

static void run_op(void *arg, int run) {
    oprun *x = arg;
    if (run) {
        for (size_t i = 0; i < x->n; i++) {
            if (x->relu)
                x->out[i] = x->in[0][i] > 0 ? x->in[0][i] : 0;
            else
                x->out[i] = x->mul ? x->in[0][i] * x->in[1][i] : x->in[0][i] + x->in[1][i];
        }
    }
    free(x);
}

static size_t elems(const aclTensorDesc *d) {
    size_t n = 1;
    for (int i = 0; i < d->ndims; i++) n *= (size_t)d->dims[i];
    return n;
}

static int same_shape(const aclTensorDesc *a, const aclTensorDesc *b) {
    if (a->ndims != b->ndims) return 0;
    for (int i = 0; i < a->ndims; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* bind resolves buffer k of bufs to device memory of n float32 values. */
static aclError bind(const char *fn, const char *what, int k, aclDataBuffer *h, size_t n, int dev, float **out) {
    void *data;
    size_t size;
    if (!dbuf_get(h, &data, &size)) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "%s buffer %d is NULL or unknown", what, k);
    if (size < 4 * n) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "%s buffer %d holds %zu bytes, the tensor needs %zu", what, k, size, 4 * n);
    classified c;
    classify(data, 4 * n, &c);
    if (c.kind != MK_DEVICE || !c.in_range || c.device != dev)
        return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "%s buffer %d (%p) is not device memory of device %d", what, k, data, dev);
    *out = c.host;
    return ACL_SUCCESS;
}

STUB_API aclError aclopCompileAndExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                           aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                                           aclDataBuffer *outputs[], aclopAttr *attr, aclopEngineType engineType,
                                           aclopCompileType compileFlag, const char *opPath, aclrtStream stream) {
    ENTER();
    const char *fn = __func__;
    (void)opPath;
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(fn, &c);
    if (r) LOCKED_RETURN(r);
    if (!opType) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "opType is NULL"));
    if (numInputs < 0 || numInputs > MAX_IO || numOutputs < 0 || numOutputs > MAX_IO ||
        (numInputs && (!inputDesc || !inputs)) || (numOutputs && (!outputDesc || !outputs)))
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "%d inputs, %d outputs", numInputs, numOutputs));
    if (engineType < ACL_ENGINE_SYS || engineType > ACL_ENGINE_VECTOR || compileFlag < ACL_COMPILE_SYS ||
        compileFlag > ACL_COMPILE_UNREGISTERED)
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "engine %d, compile type %d", engineType, compileFlag));
    stub_stream *s;
    if ((r = resolve_stream(fn, stream, 1, &s))) LOCKED_RETURN(r);
    aclTensorDesc *in[MAX_IO], *out[MAX_IO];
    for (int i = 0; i < numInputs; i++)
        if (!(in[i] = get_tdesc(inputDesc[i])))
            LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "input desc %d is NULL or unknown", i));
    for (int i = 0; i < numOutputs; i++)
        if (!(out[i] = get_tdesc(outputDesc[i])))
            LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "output desc %d is NULL or unknown", i));
    aclopAttr *a = NULL;
    if (attr && !(a = get_attr(attr))) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "unknown op attr %p", (void *)attr));

    int relu = !strcmp(opType, "Relu"), add = !strcmp(opType, "Add"), mul = !strcmp(opType, "Mul");
    if (!relu && !add && !mul) LOCKED_RETURN(stub_fail(ACL_ERROR_OP_NOT_FOUND, fn, "op type %s is not supported", opType));
    int want = relu ? 1 : 2;
    if (numInputs != want) LOCKED_RETURN(stub_fail(ACL_ERROR_OP_INPUT_NOT_MATCH, fn, "%s takes %d inputs, got %d", opType, want, numInputs));
    for (int i = 0; i < numInputs; i++)
        if (in[i]->dt != ACL_FLOAT || !same_shape(in[i], in[0]))
            LOCKED_RETURN(stub_fail(ACL_ERROR_OP_INPUT_NOT_MATCH, fn, "%s input %d: float32 of one shape", opType, i));
    if (a && a->n) LOCKED_RETURN(stub_fail(ACL_ERROR_OP_ATTR_NOT_MATCH, fn, "%s has no attribute %s", opType, a->names[0]));
    if (numOutputs != 1 || out[0]->dt != ACL_FLOAT || !same_shape(out[0], in[0]))
        LOCKED_RETURN(stub_fail(ACL_ERROR_OP_OUTPUT_NOT_MATCH, fn, "%s has one float32 output of its input's shape", opType));

    oprun *x = calloc(1, sizeof *x);
    if (!x) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, fn, "out of host memory"));
    x->relu = relu;
    x->mul = mul;
    x->n = elems(in[0]);
    for (int i = 0; i < numInputs && !r; i++) r = bind(fn, "input", i, inputs[i], x->n, c->device, &x->in[i]);
    if (!r) r = bind(fn, "output", 0, outputs[0], x->n, c->device, &x->out);
    if (r) {
        free(x);
        LOCKED_RETURN(r);
    }
    task t = {.type = TASK_CALL, .fn = run_op, .arg = x};
    LOCKED_RETURN(enqueue(s, &t));
}
