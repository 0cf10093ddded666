/* Internal state shared by the files of the stub libascendcl. One global
 * mutex guards all state; the current context is per thread, as in ACL. */
#ifndef STUB_H
#define STUB_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <time.h>

#include "acl_abi.h"

#define STUB_API ACL_FUNC_VISIBILITY

/* Variants for the binding's tests: STUB_OMIT_REQUIRED drops symbols the
 * binding requires, STUB_OMIT_OPTIONAL drops symbols it treats as optional. */
#define HIDDEN __attribute__((visibility("hidden")))

/* Handle values are synthetic and never reused, so a destroyed handle is
 * recognised as such instead of aliasing a new object. */
#define HANDLE_STEP 16u
#define CTX_BASE ((uintptr_t)1 << 40)
#define STREAM_BASE ((uintptr_t)2 << 40)
#define EVENT_BASE ((uintptr_t)3 << 40)
#define GATE_BASE ((uintptr_t)4 << 40)

typedef struct table {
    void **slot;
    size_t n, cap;
} table;

typedef struct stub_ctx stub_ctx;
typedef struct stub_stream stub_stream;
typedef struct stub_event stub_event;

enum task_type { TASK_COPY, TASK_SET, TASK_RECORD, TASK_WAIT, TASK_CALL, TASK_RESET };

typedef struct task {
    struct task *next;
    int type;
    int fail;         /* injected failure code, 0 for none */
    void *dst;        /* COPY, SET */
    const void *src;  /* COPY */
    size_t n;         /* COPY, SET */
    int value;        /* SET */
    stub_event *ev;   /* RECORD, WAIT */
    uint64_t seq;     /* RECORD, WAIT */
    void (*fn)(void *, int); /* CALL: fn(arg, 1) runs, fn(arg, 0) drops; both free arg */
    void *arg;
} task;

struct stub_stream {
    uintptr_t handle;
    stub_ctx *ctx;
    int alive;
    int is_default;
    int err;  /* first task failure since the last synchronize */
    int stop; /* ACL_STOP_ON_FAILURE was set on it */
    task *head, *tail;
    uint64_t fail_k; /* the fail_k-th task enqueued from now fails */
    int fail_code;
};

struct stub_event {
    uintptr_t handle;
    stub_ctx *ctx;
    int alive;
    uint32_t flag;
    uint64_t record_seq, reached_seq;
    struct timespec ts;
    int err;
};

struct stub_ctx {
    uintptr_t handle;
    int device;
    int alive;
    int is_default;
    stub_stream *defstream;
    int stop_mode; /* a stream of it is in ACL_STOP_ON_FAILURE */
    int fail_err;  /* in stop mode: the failure that stopped the context */
};

typedef struct device {
    int set_count; /* aclrtSetDevice minus aclrtResetDevice */
    stub_ctx *defctx;
    uint64_t peers; /* bit d: peer access to device d enabled */
} device;

HIDDEN extern pthread_mutex_t g_mu;
HIDDEN extern pthread_cond_t g_cv;
HIDDEN extern int g_state;  /* 1 once the runtime is set up (first call) */
HIDDEN extern int g_inited; /* between aclInit and aclFinalize */
HIDDEN extern int g_ndev;
HIDDEN extern device *g_dev;
HIDDEN extern table g_ctxs, g_streams, g_events, g_gates;
HIDDEN extern uint64_t g_queued;

#define ENTER()                                     \
    do {                                            \
        if (stub_enter()) return stub_injected(__func__); \
    } while (0)

#define LOCKED_RETURN(x)             \
    do {                             \
        aclError r_ = (x);           \
        pthread_mutex_unlock(&g_mu); \
        return r_;                   \
    } while (0)

/* core.c */
HIDDEN int stub_enter(void);
HIDDEN aclError stub_injected(const char *fn);
HIDDEN aclError stub_fail(aclError code, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
HIDDEN aclError need_init(const char *fn);
HIDDEN stub_ctx *current_ctx(void);
HIDDEN void set_current_ctx(stub_ctx *c);
HIDDEN aclError need_ctx(const char *fn, stub_ctx **out);
/* need_init_ctx checks aclInit, then the current context, before any argument
 * (the order the fallback follows too). */
HIDDEN aclError need_init_ctx(const char *fn, stub_ctx **out);
/* need_ge (and need_ge_ctx) is the model API's check: aclInit, then the
 * current context. */
HIDDEN aclError need_ge(const char *fn);
HIDDEN aclError need_ge_ctx(const char *fn, stub_ctx **out);
HIDDEN uintptr_t table_add(table *t, uintptr_t base, void *obj);
HIDDEN void *table_get(table *t, uintptr_t base, uintptr_t h);
HIDDEN void release_device(int dev);
HIDDEN void note_leaks(int kind, uint64_t n);

/* mem.c */
enum mem_kind { MK_PLAIN, MK_DEVICE, MK_DEVFREE, MK_PINNED, MK_REGISTERED, MK_ALIAS };
typedef struct classified {
    int kind;
    int in_range; /* the whole range lies inside the allocation */
    int device;   /* MK_DEVICE, MK_DEVFREE */
    void *host;   /* address to touch (ALIAS translated) */
} classified;
HIDDEN void classify(const void *p, size_t n, classified *out);
HIDDEN void mem_reset_device(int dev);
HIDDEN void mem_reset_host(void);
HIDDEN int mem_map_devices(int ndev, uint64_t cap);
HIDDEN aclError check_copy(const char *fn, void *dst, size_t destMax, const void *src, size_t count,
                           int kind, int *async, void **hdst, const void **hsrc);
HIDDEN int peered(int a, int b); /* peer access enabled between devices a and b */
HIDDEN aclError check_set(const char *fn, void *p, size_t maxCount, size_t count, void **hp);
HIDDEN uint64_t mem_live(int kind);
HIDDEN uint64_t mem_live_device(int dev);
HIDDEN int dev_alloc(int dev, size_t size, void **out);
HIDDEN void dev_free(int dev, void *p);
HIDDEN extern uint64_t g_cap;

/* stream.c */
HIDDEN aclError stream_error(stub_stream *s); /* the error a synchronize reports (and clears) */
HIDDEN aclError resolve_stream(const char *fn, aclrtStream s, int check_ctx, stub_stream **out);
HIDDEN aclError enqueue(stub_stream *s, task *t);
HIDDEN stub_stream *new_stream(stub_ctx *c, int is_default);
HIDDEN void kill_stream(stub_stream *s);
HIDDEN void kill_event(stub_event *e);
HIDDEN void pump(void);

/* model.c */
HIDDEN void model_reset(void);
HIDDEN uint64_t model_release_device(int dev); /* unloads the models of dev, returns how many */
HIDDEN uint64_t model_live(void);
HIDDEN int call_touches(const void *arg, const char *lo, const char *hi);
/* dbuf_get reads a live data buffer (g_mu held); 0 for NULL or unknown. */
HIDDEN int dbuf_get(const aclDataBuffer *h, void **data, size_t *size);

/* op.c: tensor descriptions, for the model API's datasets (g_mu held).
 * tdesc_make returns a new handle (0 when out of memory); tdesc_read
 * returns the dims count of a live description (-1 for NULL or unknown)
 * and fills dt, format and up to 8 dims. */
HIDDEN uintptr_t tdesc_make(int32_t dt, int32_t format, int ndims, const int64_t *dims);
HIDDEN int tdesc_read(uintptr_t h, int32_t *dt, int32_t *format, int64_t *dims);
HIDDEN void tdesc_free(uintptr_t h);

#endif
