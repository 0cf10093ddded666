/*
 * Test stub of libhccl for the purego binding (package hccl/native).
 *
 * The exported functions have the prototypes, enum values, struct layouts
 * and result codes of hccl.h, hccl_types.h and hccl_one_sided_services.h.
 * Ranks are threads of one process: a root info names an in-process
 * rendezvous, and collectives meet in shared state guarded by one mutex and
 * one condition variable, with a timeout. Device buffers are plain host
 * memory; every operation runs synchronously, whatever the stream.
 * Behaviour on misuse follows docs/misuse.md (section HCCL).
 */
#ifndef HCCL_STUB_H
#define HCCL_STUB_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---- ABI (hccl_types.h) ---- */

typedef enum {
    HCCL_SUCCESS = 0,
    HCCL_E_PARA = 1,
    HCCL_E_PTR = 2,
    HCCL_E_MEMORY = 3,
    HCCL_E_INTERNAL = 4,
    HCCL_E_NOT_SUPPORT = 5,
    HCCL_E_NOT_FOUND = 6,
    HCCL_E_UNAVAIL = 7,
    HCCL_E_SYSCALL = 8,
    HCCL_E_TIMEOUT = 9,
    HCCL_E_OPEN_FILE_FAILURE = 10,
    HCCL_E_TCP_CONNECT = 11,
    HCCL_E_ROCE_CONNECT = 12,
    HCCL_E_TCP_TRANSFER = 13,
    HCCL_E_ROCE_TRANSFER = 14,
    HCCL_E_RUNTIME = 15,
    HCCL_E_DRV = 16,
    HCCL_E_PROFILING = 17,
    HCCL_E_CCE = 18,
    HCCL_E_NETWORK = 19,
    HCCL_E_AGAIN = 20,
    HCCL_E_REMOTE = 21,
    HCCL_E_SUSPENDING = 22,
    HCCL_E_OPRETRY_FAIL = 23,
    HCCL_E_OOM = 24,
    HCCL_E_IN_STATUS = 1041,
    HCCL_E_RESERVED
} HcclResult;

typedef void *HcclComm;
typedef void *aclrtStream;

typedef enum {
    HCCL_REDUCE_SUM = 0,
    HCCL_REDUCE_PROD = 1,
    HCCL_REDUCE_MAX = 2,
    HCCL_REDUCE_MIN = 3,
    HCCL_REDUCE_RESERVED = 255
} HcclReduceOp;

typedef enum {
    HCCL_DATA_TYPE_INT8 = 0,
    HCCL_DATA_TYPE_INT16 = 1,
    HCCL_DATA_TYPE_INT32 = 2,
    HCCL_DATA_TYPE_FP16 = 3,
    HCCL_DATA_TYPE_FP32 = 4,
    HCCL_DATA_TYPE_INT64 = 5,
    HCCL_DATA_TYPE_UINT64 = 6,
    HCCL_DATA_TYPE_UINT8 = 7,
    HCCL_DATA_TYPE_UINT16 = 8,
    HCCL_DATA_TYPE_UINT32 = 9,
    HCCL_DATA_TYPE_FP64 = 10,
    HCCL_DATA_TYPE_BFP16 = 11,
    HCCL_DATA_TYPE_INT128 = 12,
    HCCL_DATA_TYPE_HIF8 = 14,
    HCCL_DATA_TYPE_FP8E4M3 = 15,
    HCCL_DATA_TYPE_FP8E5M2 = 16,
    HCCL_DATA_TYPE_FP8E8M0 = 17,
    HCCL_DATA_TYPE_RESERVED = 255
} HcclDataType;

#define HCCL_ROOT_INFO_BYTES 4108
#define COMM_NAME_MAX_LENGTH 128
typedef struct HcclRootInfoDef {
    char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

typedef enum { HCCL_SEND = 0, HCCL_RECV = 1, HCCL_SEND_RECV_RESERVED } HcclSendRecvType;

typedef struct HcclSendRecvItemDef {
    HcclSendRecvType sendRecvType;
    void *buf;
    uint64_t count;
    HcclDataType dataType;
    uint32_t remoteRank;
} HcclSendRecvItem;

#define HCCL_COMM_CONFIG_INFO_BYTES 24
#define HCCL_COMM_CONFIG_MAGIC_WORD 0xf0f0f0f0u
#define HCCL_COMM_CONFIG_VERSION 10
#define HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET 0xffffffffu

/* HcclCommConfig of HCCL_COMM_CONFIG_VERSION 10. */
typedef struct HcclCommConfigDef {
    char reserved[HCCL_COMM_CONFIG_INFO_BYTES];
    uint32_t hcclBufferSize;
    uint32_t hcclDeterministic;
    char hcclCommName[COMM_NAME_MAX_LENGTH];
    char hcclUdi[128];
    uint32_t hcclOpExpansionMode;
    uint32_t hcclRdmaTrafficClass;
    uint32_t hcclRdmaServiceLevel;
    uint32_t hcclWorldRankID;
    uint64_t hcclJobID;
    uint8_t aclGraphZeroCopyEnable;
    int32_t hcclExecTimeOut;
    char hcclAlgo[1600];
    char hcclRetryEnable[50];
    char hcclRetryParams[128];
    char hcclBufferName[128];
    uint32_t hcclQos;
} HcclCommConfig;

_Static_assert(sizeof(HcclSendRecvItem) == 32, "HcclSendRecvItem layout");
_Static_assert(offsetof(HcclSendRecvItem, remoteRank) == 28, "HcclSendRecvItem layout");
_Static_assert(sizeof(HcclCommConfig) == 2232, "HcclCommConfig v10 layout");
_Static_assert(offsetof(HcclCommConfig, hcclExecTimeOut) == 316, "HcclCommConfig v10 layout");

/* hccl_one_sided_services.h / hcomm_res_defs.h */
#define HCCL_MEM_DESC_LENGTH 511
typedef struct {
    char desc[HCCL_MEM_DESC_LENGTH + 1];
} HcclMemDesc;

typedef struct {
    HcclMemDesc *array;
    uint32_t arrayLength;
} HcclMemDescs;

typedef struct {
    void *localAddr;
    void *remoteAddr;
    uint64_t count;
    HcclDataType dataType;
} HcclOneSideOpDesc;

typedef enum { COMM_MEM_TYPE_DEVICE = 0, COMM_MEM_TYPE_HOST = 1 } CommMemType;

typedef struct {
    CommMemType type;
    void *addr;
    uint64_t size;
} CommMem;

_Static_assert(sizeof(HcclMemDescs) == 16, "HcclMemDescs layout");
_Static_assert(sizeof(HcclOneSideOpDesc) == 32, "HcclOneSideOpDesc layout");
_Static_assert(sizeof(CommMem) == 24, "CommMem layout");

#define EXPORT __attribute__((visibility("default")))

/* ---- internals shared by the stub's files ---- */

/* Everything after this point that is not marked EXPORT stays inside the
 * library (deliberately never popped: it covers the .c files too). */
#pragma GCC visibility push(hidden)

/* One collective call site: the k-th collective of a group. */
struct coll_arg {
    int kind;
    void *send, *recv;
    uint64_t count;
    int dt, rdt, op;
    uint32_t root;
    const uint64_t *sc, *sd, *rc, *rd;
};

struct coll {
    uint64_t seq;
    uint32_t arrived, left;
    int done, abandoned;
    HcclResult result;
    struct coll_arg *args; /* n entries */
    struct coll *next;
};

/* A posted send waiting for its receive. */
struct msg {
    uint32_t src, dst;
    uint64_t seq;
    const void *buf;
    uint64_t count;
    int dt;
    int state; /* 0 posted, 1 consumed */
    HcclResult result;
    struct msg *next;
};

/* An offer of one side of a pairwise exchange (memory descriptors or a
 * window). */
struct offer {
    int kind; /* OFFER_MEMDESC, OFFER_WINDOW */
    uint32_t from, to;
    uint64_t seq;
    HcclMemDesc *descs;
    uint32_t ndesc;
    struct offer *next;
};
#define OFFER_MEMDESC 1
#define OFFER_WINDOW 2

struct group {
    uint64_t id;
    uint32_t n;
    char name[COMM_NAME_MAX_LENGTH];
    int timeout_ms; /* 0: the global timeout */
    uint32_t refs;  /* live comms */
    uint64_t *sendseq, *recvseq; /* n*n: [src*n+dst] */
    uint64_t *exseq, *winseq;    /* n*n: [me*n+peer] */
    struct coll *colls;
    struct msg *msgs;
    struct offer *offers;
};

struct comm {
    uint64_t id;
    struct group *g;
    uint32_t rank;
    uint64_t seq; /* next collective */
    int linked;   /* the first operation built the links */
    int broken;   /* an operation failed its stream: every later one does too */
    HcclResult async_err;
    int a3;      /* the device is an Atlas A3 (HcclStubSetSocName): windows exist */
    int has_win; /* a buffer window is registered (one per communicator) */
    int ccl_buf; /* a collective created the CCL buffer: no window any more */
};

/* Global state: everything below is guarded by stub_mu. */
extern pthread_mutex_t stub_mu;
extern pthread_cond_t stub_cv;
extern long stub_live; /* live objects, for leak checks */

/* comm_get resolves a handle: HCCL_E_PTR for NULL, HCCL_E_PARA for an
 * unknown or destroyed one. Call with stub_mu held. */
HcclResult comm_get(HcclComm h, struct comm **out);
/* deadline_after returns now + the group's timeout, for stub_wait. */
struct timespec deadline_for(const struct group *g);
/* stub_wait waits on stub_cv until the deadline; returns 0 on wakeup and
 * ETIMEDOUT once the deadline passed. */
int stub_wait(const struct timespec *deadline);

size_t dt_size(int dt);
int dt_reducible(int dt);
void *xcalloc(size_t n, size_t size);

void group_free_ops(struct group *g);       /* collectives, messages */
void onesided_release_comm(struct comm *c); /* registrations, accesses, windows, offers */
long onesided_live(void);

HcclResult coll_run(struct comm *c, struct coll_arg *a);

/* ccl_buffer is what a collective of a multi-rank communicator does at its
 * call: it creates the CCL buffer, which a registered window forbids
 * (HCCL_E_NOT_SUPPORT). Call with stub_mu held. */
HcclResult ccl_buffer(struct comm *c);

/* Streams and outcomes (stream.c). op_begin starts an operation: when the
 * communicator is broken it fails the stream and returns 1 (the call then
 * returns HCCL_SUCCESS without meeting anyone). op_outcome turns the
 * rendezvous result into the call's result. stream_valid: a stream from
 * HcclStubStreamCreate. */
int op_begin(struct comm *c, aclrtStream stream, struct timespec *start);
HcclResult op_outcome(struct comm *c, aclrtStream stream, HcclResult rc, const struct timespec *start);
int stream_valid(aclrtStream stream);
int check_mode(void);

#endif
