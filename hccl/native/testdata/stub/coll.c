/* Collectives: the ranks of a group meet at the k-th collective; the last
 * to arrive checks that all agree and moves the data for everyone. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"

enum { K_BARRIER = 1, K_ALLREDUCE, K_BROADCAST, K_ALLGATHER, K_REDUCESCATTER, K_ALLTOALLV };

/* ---- narrow floats (round to nearest, ties to even) ---- */

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal */
            float f = (float)man * (1.0f / 16777216.0f); /* man × 2^-24, exact */
            return sign ? -f : f;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t abs = x & 0x7fffffffu;
    if (abs > 0x7f800000u)
        return sign | 0x7e00; /* NaN */
    if (abs >= 0x477ff000u)   /* rounds to >= 65520: infinity */
        return sign | 0x7c00;
    if (abs < 0x38800000u) { /* below the smallest normal: subnormal or zero */
        float a;
        memcpy(&a, &abs, 4);
        float q = a * 16777216.0f; /* a / 2^-24, exact */
        uint32_t i = (uint32_t)q;
        float frac = q - (float)i;
        if (frac > 0.5f || (frac == 0.5f && (i & 1)))
            i++;
        return sign | (uint16_t)i;
    }
    uint32_t e = (abs >> 23) - 112, m = abs & 0x7fffff;
    uint32_t h = (e << 10) | (m >> 13), rest = m & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        h++;
    return sign | (uint16_t)h;
}

static float bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ---- reductions ---- */

/* reduce combines element i of every rank's buffer at off (bytes) with op
 * into dst. Integers wrap; fp16/bf16/fp32 accumulate in float, fp64 in
 * double, in rank order. */
static void reduce(void *dst, const struct coll_arg *args, uint32_t n, size_t off, uint64_t count, int dt, int op)
{
#define SRC(r) ((const char *)args[r].send + off)
#define INTS(T, ACC)                                                                                          \
    for (uint64_t i = 0; i < count; i++) {                                                                    \
        ACC acc = (ACC)((const T *)SRC(0))[i];                                                                \
        for (uint32_t r = 1; r < n; r++) {                                                                    \
            ACC v = (ACC)((const T *)SRC(r))[i];                                                              \
            switch (op) {                                                                                     \
            case HCCL_REDUCE_SUM: acc = (ACC)((uint64_t)acc + (uint64_t)v); break;                            \
            case HCCL_REDUCE_PROD: acc = (ACC)((uint64_t)acc * (uint64_t)v); break;                           \
            case HCCL_REDUCE_MAX: acc = v > acc ? v : acc; break;                                             \
            default: acc = v < acc ? v : acc; break;                                                          \
            }                                                                                                 \
        }                                                                                                     \
        ((T *)dst)[i] = (T)acc;                                                                               \
    }
#define FLOATS(T, ACC, LOAD, STORE)                                                                           \
    for (uint64_t i = 0; i < count; i++) {                                                                    \
        ACC acc = LOAD(((const T *)SRC(0))[i]);                                                               \
        for (uint32_t r = 1; r < n; r++) {                                                                    \
            ACC v = LOAD(((const T *)SRC(r))[i]);                                                             \
            switch (op) {                                                                                     \
            case HCCL_REDUCE_SUM: acc = acc + v; break;                                                       \
            case HCCL_REDUCE_PROD: acc = acc * v; break;                                                      \
            case HCCL_REDUCE_MAX: acc = v > acc ? v : acc; break;                                             \
            default: acc = v < acc ? v : acc; break;                                                          \
            }                                                                                                 \
        }                                                                                                     \
        ((T *)dst)[i] = STORE(acc);                                                                           \
    }
#define ID(x) (x)
    switch (dt) {
    case HCCL_DATA_TYPE_INT8: INTS(int8_t, int64_t) break;
    case HCCL_DATA_TYPE_INT16: INTS(int16_t, int64_t) break;
    case HCCL_DATA_TYPE_INT32: INTS(int32_t, int64_t) break;
    case HCCL_DATA_TYPE_INT64: INTS(int64_t, int64_t) break;
    case HCCL_DATA_TYPE_UINT8: INTS(uint8_t, uint64_t) break;
    case HCCL_DATA_TYPE_UINT16: INTS(uint16_t, uint64_t) break;
    case HCCL_DATA_TYPE_UINT32: INTS(uint32_t, uint64_t) break;
    case HCCL_DATA_TYPE_UINT64: INTS(uint64_t, uint64_t) break;
    case HCCL_DATA_TYPE_FP16: FLOATS(uint16_t, float, half_to_float, float_to_half) break;
    case HCCL_DATA_TYPE_BFP16: FLOATS(uint16_t, float, bf16_to_float, float_to_bf16) break;
    case HCCL_DATA_TYPE_FP32: FLOATS(float, float, ID, ID) break;
    case HCCL_DATA_TYPE_FP64: FLOATS(double, double, ID, ID) break;
    }
#undef SRC
#undef INTS
#undef FLOATS
#undef ID
}

/* ---- the meeting ---- */

static int agree(const struct coll_arg *a, const struct coll_arg *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case K_BARRIER:
        return 1;
    case K_ALLREDUCE:
    case K_REDUCESCATTER:
        return a->count == b->count && a->dt == b->dt && a->op == b->op;
    case K_BROADCAST:
        return a->count == b->count && a->dt == b->dt && a->root == b->root;
    case K_ALLGATHER:
        return a->count == b->count && a->dt == b->dt;
    case K_ALLTOALLV:
        return a->dt == b->dt && a->rdt == b->rdt;
    }
    return 0;
}

/* execute checks the arguments of every rank and moves the data. */
static HcclResult execute(struct coll *k, uint32_t n)
{
    struct coll_arg *a = k->args;
    for (uint32_t r = 1; r < n; r++)
        if (!agree(&a[0], &a[r]))
            return HCCL_E_PARA;
    size_t es = dt_size(a[0].dt);
    switch (a[0].kind) {
    case K_BARRIER:
        return HCCL_SUCCESS;
    case K_ALLREDUCE: {
        size_t nb = (size_t)a[0].count * es;
        void *tmp = xcalloc(1, nb);
        reduce(tmp, a, n, 0, a[0].count, a[0].dt, a[0].op);
        for (uint32_t r = 0; r < n; r++)
            memcpy(a[r].recv, tmp, nb);
        free(tmp);
        return HCCL_SUCCESS;
    }
    case K_REDUCESCATTER: {
        size_t nb = (size_t)a[0].count * es;
        void *tmp = xcalloc(n, nb);
        for (uint32_t r = 0; r < n; r++)
            reduce((char *)tmp + r * nb, a, n, r * nb, a[0].count, a[0].dt, a[0].op);
        for (uint32_t r = 0; r < n; r++)
            memcpy(a[r].recv, (char *)tmp + r * nb, nb);
        free(tmp);
        return HCCL_SUCCESS;
    }
    case K_BROADCAST: {
        size_t nb = (size_t)a[0].count * es;
        const void *src = a[a[0].root].send;
        for (uint32_t r = 0; r < n; r++)
            if (a[r].send != src)
                memmove(a[r].send, src, nb);
        return HCCL_SUCCESS;
    }
    case K_ALLGATHER: {
        size_t nb = (size_t)a[0].count * es;
        char *tmp = xcalloc(n, nb);
        for (uint32_t r = 0; r < n; r++)
            memcpy(tmp + r * nb, a[r].send, nb);
        for (uint32_t r = 0; r < n; r++)
            memcpy(a[r].recv, tmp, n * nb);
        free(tmp);
        return HCCL_SUCCESS;
    }
    case K_ALLTOALLV: {
        if (a[0].dt != a[0].rdt)
            return HCCL_E_PARA;
        /* rank i's sendCounts[j] must equal rank j's recvCounts[i]. */
        size_t total = 0;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++) {
                if (a[i].sc[j] != a[j].rc[i])
                    return HCCL_E_PARA;
                total += a[i].sc[j] * es;
            }
        /* Stage through a copy so that a rank's send and receive buffers
         * may overlap. */
        char *tmp = xcalloc(1, total), *p = tmp;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++) {
                memcpy(p, (const char *)a[i].send + a[i].sd[j] * es, a[i].sc[j] * es);
                p += a[i].sc[j] * es;
            }
        p = tmp;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++) {
                memcpy((char *)a[j].recv + a[j].rd[i] * es, p, a[i].sc[j] * es);
                p += a[i].sc[j] * es;
            }
        free(tmp);
        return HCCL_SUCCESS;
    }
    }
    return HCCL_E_INTERNAL;
}

static void coll_unlink(struct group *g, struct coll *k)
{
    for (struct coll **p = &g->colls; *p != NULL; p = &(*p)->next) {
        if (*p == k) {
            *p = k->next;
            break;
        }
    }
    free(k->args);
    free(k);
    stub_live--;
}

HcclResult coll_run(struct comm *c, struct coll_arg *a)
{
    struct group *g = c->g;
    uint64_t seq = c->seq++;
    struct coll *k = g->colls;
    while (k != NULL && k->seq != seq)
        k = k->next;
    if (k == NULL) {
        k = xcalloc(1, sizeof *k);
        k->seq = seq;
        k->args = xcalloc(g->n, sizeof *k->args);
        k->next = g->colls;
        g->colls = k;
        stub_live++;
    }
    HcclResult rc;
    if (k->abandoned) {
        rc = HCCL_E_TIMEOUT; /* the others gave up on this collective */
    } else {
        k->args[c->rank] = *a;
        if (++k->arrived == g->n) {
            k->result = execute(k, g->n);
            k->done = 1;
            pthread_cond_broadcast(&stub_cv);
        } else {
            struct timespec dl = deadline_for(g);
            while (!k->done && !k->abandoned) {
                if (stub_wait(&dl) == ETIMEDOUT && !k->done) {
                    k->abandoned = 1;
                    pthread_cond_broadcast(&stub_cv);
                }
            }
        }
        rc = k->done ? k->result : HCCL_E_TIMEOUT;
    }
    if (++k->left == g->n)
        coll_unlink(g, k);
    return rc;
}

void group_free_ops(struct group *g)
{
    while (g->colls != NULL)
        coll_unlink(g, g->colls);
    while (g->msgs != NULL) {
        struct msg *m = g->msgs;
        g->msgs = m->next;
        free(m);
        stub_live--;
    }
}

/* ---- entry points ---- */

/* enter resolves the communicator with stub_mu held; on failure it unlocks. */
static HcclResult enter(HcclComm comm, struct comm **c)
{
    pthread_mutex_lock(&stub_mu);
    HcclResult rc = comm_get(comm, c);
    if (rc != HCCL_SUCCESS)
        pthread_mutex_unlock(&stub_mu);
    return rc;
}

/* run_checked meets the other ranks (stub_mu held, c resolved) and turns
 * the result into what the call returns (stream.c). A null stream is
 * HCCL_E_PTR (op_base_host.cc:79-82, CHK_PTR_NULL(stream)). */
static HcclResult run_checked(struct comm *c, struct coll_arg *a, aclrtStream stream)
{
    if (stream == NULL)
        return HCCL_E_PTR;
    HcclResult rc = ccl_buffer(c);
    if (rc != HCCL_SUCCESS)
        return rc;
    struct timespec start;
    if (op_begin(c, stream, &start))
        return HCCL_SUCCESS;
    return op_outcome(c, stream, coll_run(c, a), &start);
}

static HcclResult run(HcclComm comm, struct coll_arg *a, aclrtStream stream)
{
    struct comm *c;
    HcclResult rc = enter(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (a->kind == K_BROADCAST && a->root >= c->g->n)
        rc = HCCL_E_PARA;
    else
        rc = run_checked(c, a, stream);
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

/* SYS_MAX_COUNT (hccl_common.h:64): a larger count is HCCL_E_PARA
 * (param_check.cc:150-158). */
#define MAX_COUNT 0x7FFFFFFFFull

/* check_type: an undefined data type is HCCL_E_NOT_SUPPORT
 * (param_check.cc:281-291). */
static HcclResult check_type(int dt, uint64_t count)
{
    if (dt_size(dt) == 0)
        return HCCL_E_NOT_SUPPORT;
    if (count > MAX_COUNT)
        return HCCL_E_PARA;
    return HCCL_SUCCESS;
}

/* check_reduce: an undefined op is HCCL_E_NOT_SUPPORT (param_check.cc:307-325),
 * as is a type HCCL does not reduce, and PROD of int16 and bf16 on A2/A3
 * (param_check.cc:327-345). */
static HcclResult check_reduce(int dt, int op, uint64_t count)
{
    HcclResult rc = check_type(dt, count);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (op < HCCL_REDUCE_SUM || op > HCCL_REDUCE_MIN)
        return HCCL_E_NOT_SUPPORT;
    if (!dt_reducible(dt))
        return HCCL_E_NOT_SUPPORT;
    if (op == HCCL_REDUCE_PROD && (dt == HCCL_DATA_TYPE_INT16 || dt == HCCL_DATA_TYPE_BFP16))
        return HCCL_E_NOT_SUPPORT;
    return HCCL_SUCCESS;
}

EXPORT HcclResult HcclBarrier(HcclComm comm, aclrtStream stream)
{
    struct coll_arg a = {.kind = K_BARRIER};
    return run(comm, &a, stream);
}

#ifndef STUB_OMIT_REQUIRED /* variant without a required symbol, to test Open */
EXPORT HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                                HcclComm comm, aclrtStream stream)
{
    if (count == 0)
        return HCCL_SUCCESS; /* op_base_host.cc:67: before the comm is looked at */
    if (comm == NULL)
        return HCCL_E_PTR;
    HcclResult rc = check_reduce(dataType, op, count);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (sendBuf == NULL || recvBuf == NULL)
        return HCCL_E_PTR;
    struct coll_arg a = {.kind = K_ALLREDUCE, .send = sendBuf, .recv = recvBuf, .count = count, .dt = dataType, .op = op};
    return run(comm, &a, stream);
}
#endif

EXPORT HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                                aclrtStream stream)
{
    if (comm == NULL)
        return HCCL_E_PTR;
    HcclResult rc = check_type(dataType, count);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (count == 0)
        return HCCL_SUCCESS;
    if (buf == NULL)
        return HCCL_E_PTR;
    struct coll_arg a = {.kind = K_BROADCAST, .send = buf, .count = count, .dt = dataType, .root = root};
    return run(comm, &a, stream);
}

EXPORT HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType, HcclComm comm,
                                aclrtStream stream)
{
    if (comm == NULL)
        return HCCL_E_PTR;
    HcclResult rc = check_type(dataType, sendCount);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (sendCount == 0)
        return HCCL_SUCCESS;
    if (sendBuf == NULL || recvBuf == NULL)
        return HCCL_E_PTR;
    struct coll_arg a = {.kind = K_ALLGATHER, .send = sendBuf, .recv = recvBuf, .count = sendCount, .dt = dataType};
    return run(comm, &a, stream);
}

EXPORT HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                    HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    if (comm == NULL)
        return HCCL_E_PTR;
    HcclResult rc = check_reduce(dataType, op, recvCount);
    if (rc != HCCL_SUCCESS)
        return rc;
    if (recvCount == 0)
        return HCCL_SUCCESS;
    if (sendBuf == NULL || recvBuf == NULL)
        return HCCL_E_PTR;
    struct coll_arg a = {.kind = K_REDUCESCATTER, .send = sendBuf, .recv = recvBuf, .count = recvCount, .dt = dataType, .op = op};
    return run(comm, &a, stream);
}

EXPORT HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls, HcclDataType sendType,
                                const void *recvBuf, const void *recvCounts, const void *rdispls, HcclDataType recvType,
                                HcclComm comm, aclrtStream stream)
{
    if (comm == NULL || sendCounts == NULL || sdispls == NULL || recvCounts == NULL || rdispls == NULL)
        return HCCL_E_PTR;
    if (dt_size(sendType) == 0 || dt_size(recvType) == 0)
        return HCCL_E_NOT_SUPPORT;
    if (sendBuf != NULL && sendBuf == recvBuf)
        return HCCL_E_PARA; /* param_check.cc:163-165 */
    struct comm *c;
    HcclResult rc = enter(comm, &c);
    if (rc != HCCL_SUCCESS)
        return rc;
    const uint64_t *sc = sendCounts, *rc_ = recvCounts;
    int any_send = 0, any_recv = 0;
    for (uint32_t j = 0; j < c->g->n; j++) {
        any_send |= sc[j] != 0;
        any_recv |= rc_[j] != 0;
    }
    if ((any_send && sendBuf == NULL) || (any_recv && recvBuf == NULL)) {
        pthread_mutex_unlock(&stub_mu);
        return HCCL_E_PTR;
    }
    struct coll_arg a = {.kind = K_ALLTOALLV, .send = (void *)sendBuf, .recv = (void *)recvBuf, .dt = sendType,
                         .rdt = recvType, .sc = sendCounts, .sd = sdispls, .rc = recvCounts, .rd = rdispls};
    rc = run_checked(c, &a, stream);
    pthread_mutex_unlock(&stub_mu);
    return rc;
}
