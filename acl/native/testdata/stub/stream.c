/* Stub libascendcl, streams and events. Tasks run synchronously in the
 * enqueuing thread when nothing is ahead of them; a stream that is held
 * (stub_hold_stream) or waits for an event keeps a queue that runs, in
 * order, as soon as it can. Failures of tasks are sticky per stream. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"

uint64_t g_queued; /* tasks waiting in all queues */

stub_stream *new_stream(stub_ctx *c, int is_default) {
    stub_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->ctx = c;
    s->alive = 1;
    s->is_default = is_default;
    s->handle = table_add(&g_streams, STREAM_BASE, s);
    if (!s->handle) {
        free(s);
        return NULL;
    }
    return s;
}

static void reach(stub_event *e, uint64_t seq, int err) {
    if (seq > e->reached_seq) e->reached_seq = seq;
    e->err = err;
    clock_gettime(CLOCK_MONOTONIC, &e->ts);
}

static void drop_queue(stub_stream *s) {
    task *t = s->head;
    while (t) {
        task *n = t->next;
        /* A record that will never run still completes its event, so that
         * nobody waits for it forever. */
        if (t->type == TASK_RECORD && t->ev->alive) reach(t->ev, t->seq, 0);
        if (t->type == TASK_CALL) t->fn(t->arg, 0);
        free(t);
        g_queued--;
        t = n;
    }
    s->head = s->tail = NULL;
}

void kill_stream(stub_stream *s) {
    drop_queue(s);
    s->alive = 0;
    pthread_cond_broadcast(&g_cv);
}

void kill_event(stub_event *e) {
    e->alive = 0;
    pump(); /* waits on it are released */
}

static int runnable(const task *t) {
    return t->type != TASK_WAIT || !t->ev->alive || t->ev->reached_seq >= t->seq;
}

/* exec runs a task. A failed task is skipped and recorded; in the default
 * mode (ACL_CONTINUE_ON_FAILURE) the stream goes on, in stop mode the first
 * failure stops every stream of the context (hicann/runtime
 * src/runtime/core/src/stream/stream.cc:4336-4352). */
static void exec(stub_stream *s, task *t) {
    stub_ctx *c = s->ctx;
    if (c->stop_mode && c->fail_err) { /* stopped: skipped */
        if (t->type == TASK_RECORD && t->ev->alive) reach(t->ev, t->seq, c->fail_err);
        if (t->type == TASK_CALL) t->fn(t->arg, 0);
        return;
    }
    if (t->fail) {
        if (!s->err) s->err = t->fail;
        if (c->stop_mode && !c->fail_err) c->fail_err = t->fail;
        if (t->type == TASK_CALL) t->fn(t->arg, 0);
        return;
    }
    switch (t->type) {
    case TASK_COPY: memmove(t->dst, t->src, t->n); break;
    case TASK_SET: memset(t->dst, t->value, t->n); break;
    case TASK_RECORD:
        if (t->ev->alive) reach(t->ev, t->seq, 0);
        break;
    case TASK_CALL: t->fn(t->arg, 1); break;
    default: break;
    }
}

void pump(void) {
    int progress;
    do {
        progress = 0;
        for (size_t i = 0; i < g_streams.n && g_queued; i++) {
            stub_stream *s = g_streams.slot[i];
            if (!s || !s->alive) continue;
            while (s->head && runnable(s->head)) {
                task *t = s->head;
                s->head = t->next;
                if (!s->head) s->tail = NULL;
                exec(s, t);
                free(t);
                g_queued--;
                progress = 1;
            }
        }
    } while (progress);
    pthread_cond_broadcast(&g_cv);
}

/* stream_error is what a synchronize reports: the context's failure once
 * it stopped (sticky), else the stream's first failure since the last
 * synchronize, which it clears (stream.cc:1790-1830, 1772-1788). */
aclError stream_error(stub_stream *s) {
    if (s->ctx->stop_mode && s->ctx->fail_err) return s->ctx->fail_err;
    aclError e = s->err;
    s->err = 0;
    return e;
}

aclError enqueue(stub_stream *s, task *t) {
    /* A stopped context takes no new task (context.cc:2889). */
    if (s->ctx->stop_mode && s->ctx->fail_err)
        return stub_fail(s->ctx->fail_err, "enqueue", "the context stopped on failure (ACL_STOP_ON_FAILURE)");
    if (s->fail_k && --s->fail_k == 0) t->fail = s->fail_code;
    if (!s->head && runnable(t)) {
        exec(s, t);
        if (t->type == TASK_RECORD) pump(); /* may release waits */
        return ACL_SUCCESS;
    }
    task *q = malloc(sizeof *q);
    if (!q) return stub_fail(ACL_ERROR_BAD_ALLOC, "enqueue", "out of host memory");
    *q = *t;
    q->next = NULL;
    if (s->tail)
        s->tail->next = q;
    else
        s->head = q;
    s->tail = q;
    g_queued++;
    pump();
    return ACL_SUCCESS;
}

aclError resolve_stream(const char *fn, aclrtStream h, int check_ctx, stub_stream **out) {
    stub_ctx *cur = NULL;
    if (!h) {
        aclError r = need_ctx(fn, &cur);
        if (r) return r;
        *out = cur->defstream;
        return ACL_SUCCESS;
    }
    stub_stream *s = table_get(&g_streams, STREAM_BASE, (uintptr_t)h);
    if (!s || !s->alive || s->is_default)
        return stub_fail(ACL_ERROR_RT_INVALID_HANDLE, fn, "unknown or destroyed stream %p", h);
    if (check_ctx) {
        aclError r = need_ctx(fn, &cur);
        if (r) return r;
        if (s->ctx != cur)
            return stub_fail(ACL_ERROR_RT_STREAM_CONTEXT, fn, "stream %p belongs to another context", h);
    }
    *out = s;
    return ACL_SUCCESS;
}

static aclError lookup_event(const char *fn, aclrtEvent h, stub_event **out) {
    if (!h) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "event is NULL");
    stub_event *e = table_get(&g_events, EVENT_BASE, (uintptr_t)h);
    if (!e || !e->alive) return stub_fail(ACL_ERROR_RT_INVALID_HANDLE, fn, "unknown or destroyed event %p", h);
    *out = e;
    return ACL_SUCCESS;
}

/* event_stream resolves the event and stream of aclrtRecordEvent,
 * aclrtStreamWaitEvent and aclrtResetEvent in the order of hicann/runtime
 * @681ef76 (the fallback's eventStream, fallback/event.go): the ACL layer's
 * NULL event (src/acl/aclrt_impl/event.cpp:89, 117; stream.cpp:232 →
 * 100000); the handles (api_c.cc:739-740, 773-774: event then stream;
 * api_c_stream.cc:127-128: stream then event for a wait → 107017); an
 * event without ACL_EVENT_SYNC for a wait or a reset (api_error.cc:
 * 1414-1416, 1760-1762 → 207000); the current context (api_impl.cc:
 * 1594-1595, 2137-2138, 2202-2203 → 107002), NULL as its default stream,
 * a stream of that context (api_impl.cc:1609-1610, 2152-2153, 2216 →
 * 107003); event and stream on one device (not settled → 107003). */
static aclError event_stream(const char *fn, aclrtEvent event, aclrtStream stream, int stream_first,
                             const char *sync_why, stub_event **e, stub_stream **s) {
    aclError r = need_init(fn);
    if (r) return r;
    if (!event) return stub_fail(ACL_ERROR_INVALID_PARAM, fn, "event is NULL");
    if (stream_first && stream && (r = resolve_stream(fn, stream, 0, s))) return r;
    if ((r = lookup_event(fn, event, e))) return r;
    if (!stream_first && stream && (r = resolve_stream(fn, stream, 0, s))) return r;
    if (sync_why && !((*e)->flag & ACL_EVENT_SYNC))
        return stub_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, "event %p was created without ACL_EVENT_SYNC: %s", event,
                         sync_why);
    if ((r = resolve_stream(fn, stream, 1, s))) return r;
    if ((*e)->ctx->device != (*s)->ctx->device)
        return stub_fail(ACL_ERROR_RT_STREAM_CONTEXT, fn, "event %p and stream %p are on different devices", event,
                         stream);
    return ACL_SUCCESS;
}

/* ---- streams ---- */

/* Per-device limits of streams and events, as the fallback's
 * WithResourceLimits: one more is the driver's NO_STREAM_RESOURCES /
 * NO_EVENT_RESOURCES, mapped to 207008 / 207007 (hicann/runtime
 * src/runtime/core/src/common/errcode_manage.cc:93-94, 576-577). The counts
 * are the driver's (not in the public source); the defaults are the
 * fallback's, a build may lower them. */
#ifndef STUB_MAX_STREAMS
#define STUB_MAX_STREAMS 2048
#endif
#ifndef STUB_MAX_EVENTS
#define STUB_MAX_EVENTS 65536
#endif

/* live_on counts the live streams (not the default ones) or events of a
 * device. */
static size_t live_on(int device, int events) {
    size_t k = 0;
    table *t = events ? &g_events : &g_streams;
    for (size_t i = 0; i < t->n; i++) {
        if (events) {
            stub_event *e = t->slot[i];
            if (e && e->alive && e->ctx->device == device) k++;
        } else {
            stub_stream *st = t->slot[i];
            if (st && st->alive && !st->is_default && st->ctx->device == device) k++;
        }
    }
    return k;
}

STUB_API aclError aclrtCreateStream(aclrtStream *stream) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!stream) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "stream is NULL"));
    size_t k = live_on(c->device, 0);
    if (k >= STUB_MAX_STREAMS)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_NO_STREAM_RESOURCE, __func__, "device %d already has %zu streams, its limit",
                                c->device, k));
    stub_stream *s = new_stream(c, 0);
    if (!s) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
    *stream = (aclrtStream)s->handle;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtDestroyStream(aclrtStream stream) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    if (r) LOCKED_RETURN(r);
    if (!stream) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "stream is NULL"));
    stub_stream *s;
    /* The stream must be in the current context: hicann/runtime
     * src/runtime/api/impl/api_impl.cc:1582-1585 → 107003. */
    if ((r = resolve_stream(__func__, stream, 1, &s))) LOCKED_RETURN(r);
    kill_stream(s);
    LOCKED_RETURN(ACL_SUCCESS);
}

static void deadline_after(struct timespec *ts, int32_t ms) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* sync_stream waits for the queue of a stream to drain, then reports its
 * sticky error. Called with g_mu held; returns with it released. */
static aclError sync_stream(const char *fn, aclrtStream h, int32_t timeout) {
    stub_ctx *c;
    aclError r = need_init_ctx(fn, &c);
    stub_stream *s;
    /* hicann/runtime src/acl/aclrt_impl/stream.cpp:141-148 */
    if (!r && timeout < -1) r = stub_fail(ACL_ERROR_RT_PARAM_INVALID, fn, "timeout %d < -1", timeout);
    if (!r) r = resolve_stream(fn, h, 0, &s);
    if (r) LOCKED_RETURN(r);
    uintptr_t handle = s->handle;
    struct timespec dl;
    if (timeout > 0) deadline_after(&dl, timeout);
    while (s->head) {
        if (timeout == 0)
            LOCKED_RETURN(stub_fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, fn, "stream %p still has pending tasks", h));
        int rc = timeout > 0 ? pthread_cond_timedwait(&g_cv, &g_mu, &dl) : pthread_cond_wait(&g_cv, &g_mu);
        s = g_state == 1 ? table_get(&g_streams, STREAM_BASE, handle) : NULL;
        if (!s || !s->alive)
            LOCKED_RETURN(stub_fail(ACL_ERROR_RT_INVALID_HANDLE, fn, "stream %p was destroyed while waiting", h));
        if (rc == ETIMEDOUT && s->head)
            LOCKED_RETURN(
                stub_fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, fn, "stream %p not done after %d ms", h, timeout));
    }
    if ((r = stream_error(s))) LOCKED_RETURN(stub_fail(r, fn, "a task of stream %p failed with %d", h, r));
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtSynchronizeStream(aclrtStream stream) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    return sync_stream(__func__, stream, -1);
}

#ifndef STUB_OMIT_OPTIONAL
STUB_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    return sync_stream(__func__, stream, timeout);
}
#endif

/* ---- events ---- */

static aclError create_event(const char *fn, aclrtEvent *event, uint32_t flag) {
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(fn, &c);
    if (r) LOCKED_RETURN(r);
    if (!event) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "event is NULL"));
    if (flag == 0 || (flag & ~(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE)))
        LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, fn, "undefined event flag 0x%x", flag));
    size_t k = live_on(c->device, 1);
    if (k >= STUB_MAX_EVENTS)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_NO_EVENT_RESOURCE, fn, "device %d already has %zu events, its limit", c->device, k));
    stub_event *e = calloc(1, sizeof *e);
    if (!e) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, fn, "out of host memory"));
    e->ctx = c;
    e->alive = 1;
    e->flag = flag;
    e->handle = table_add(&g_events, EVENT_BASE, e);
    if (!e->handle) {
        free(e);
        LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, fn, "out of host memory"));
    }
    *event = (aclrtEvent)e->handle;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtCreateEvent(aclrtEvent *event) {
    ENTER();
    return create_event(__func__, event, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE);
}

STUB_API aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag) {
    ENTER();
    return create_event(__func__, event, flag);
}

STUB_API aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_event *e;
    stub_stream *s;
    aclError r = event_stream(__func__, event, stream, 0, NULL, &e, &s);
    if (r) LOCKED_RETURN(r);
    task t = {.type = TASK_RECORD, .ev = e, .seq = ++e->record_seq};
    LOCKED_RETURN(enqueue(s, &t));
}

STUB_API aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_event *e;
    stub_stream *s;
    aclError r = event_stream(__func__, event, stream, 1, "a stream cannot wait for it", &e, &s);
    if (r) LOCKED_RETURN(r);
    if (e->reached_seq >= e->record_seq) LOCKED_RETURN(ACL_SUCCESS); /* nothing to wait for */
    task t = {.type = TASK_WAIT, .ev = e, .seq = e->record_seq};
    LOCKED_RETURN(enqueue(s, &t));
}

#ifndef STUB_OMIT_OPTIONAL
/* aclrtResetEvent: the checks of event_stream (an event without
 * ACL_EVENT_SYNC has no wait task to reset). The reset is a task of the
 * stream (hicann/runtime event.cc:764-792): it runs in order; waits bind to
 * a record when they are queued, so it changes none. */
STUB_API aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_event *e;
    stub_stream *s;
    aclError r = event_stream(__func__, event, stream, 0, "it has nothing to reset", &e, &s);
    if (r) LOCKED_RETURN(r);
    task t = {.type = TASK_RESET, .ev = e};
    LOCKED_RETURN(enqueue(s, &t));
}
#endif

STUB_API aclError aclrtSynchronizeEvent(aclrtEvent event) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    stub_event *e;
    if (!r) r = lookup_event(__func__, event, &e);
    if (r) LOCKED_RETURN(r);
    uintptr_t handle = e->handle;
    while (e->reached_seq < e->record_seq) {
        pthread_cond_wait(&g_cv, &g_mu);
        e = g_state == 1 ? table_get(&g_events, EVENT_BASE, handle) : NULL;
        if (!e || !e->alive)
            LOCKED_RETURN(stub_fail(ACL_ERROR_RT_INVALID_HANDLE, __func__, "event %p was destroyed while waiting", event));
    }
    if (e->err) LOCKED_RETURN(stub_fail(e->err, __func__, "the stream of event %p failed with %d", event, e->err));
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    if (r) LOCKED_RETURN(r);
    if (!ms) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "ms is NULL"));
    stub_event *a, *b;
    if ((r = lookup_event(__func__, startEvent, &a)) || (r = lookup_event(__func__, endEvent, &b))) LOCKED_RETURN(r);
    /* hicann/runtime src/runtime/core/src/event/event.cc:1248-1250
     * (RT_ERROR_EVENT_RECORDER_NULL → 507000) and 1265-1270
     * (RT_ERROR_EVENT_TIMESTAMP_INVALID → 107006). */
    if (!a->record_seq || !b->record_seq)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_INTERNAL_ERROR, __func__, "event %p was never recorded",
                                a->record_seq ? endEvent : startEvent));
    if (a->reached_seq < a->record_seq || b->reached_seq < b->record_seq)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, __func__, "event %p is recorded but not yet reached",
                                a->reached_seq < a->record_seq ? startEvent : endEvent));
    double d = (double)(b->ts.tv_sec - a->ts.tv_sec) * 1e3 + (double)(b->ts.tv_nsec - a->ts.tv_nsec) / 1e6;
    *ms = (float)d;
    LOCKED_RETURN(ACL_SUCCESS);
}

STUB_API aclError aclrtDestroyEvent(aclrtEvent event) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    stub_event *e;
    if (!r) r = lookup_event(__func__, event, &e);
    if (r) LOCKED_RETURN(r);
    kill_event(e);
    LOCKED_RETURN(ACL_SUCCESS);
}

/* ---- asynchronous copy and memset ---- */

/* aclrtMemcpyAsync: count 0 succeeds at once (hicann/runtime
 * src/acl/aclrt_impl/memory.cpp:688); a copy touching pageable host memory
 * is a stream synchronize plus a synchronous copy (api_error.cc:2256-2269). */
STUB_API aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                                   aclrtStream stream) {
    ENTER();
    if (count == 0) return ACL_SUCCESS;
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    void *hd;
    const void *hs;
    stub_stream *s;
    int sync = 0;
    if (!r) r = check_copy(__func__, dst, destMax, src, count, (int)kind, &sync, &hd, &hs);
    if (!r) r = resolve_stream(__func__, stream, 1, &s);
    if (r) LOCKED_RETURN(r);
    if (sync) {
        uintptr_t handle = s->handle;
        while (s->head) {
            pthread_cond_wait(&g_cv, &g_mu);
            s = table_get(&g_streams, STREAM_BASE, handle);
            if (!s || !s->alive)
                LOCKED_RETURN(stub_fail(ACL_ERROR_RT_INVALID_HANDLE, __func__, "stream %p was destroyed while waiting", stream));
        }
        if ((r = stream_error(s))) LOCKED_RETURN(stub_fail(r, __func__, "a task of stream %p failed with %d", stream, r));
        memmove(hd, hs, count);
        LOCKED_RETURN(ACL_SUCCESS);
    }
    task t = {.type = TASK_COPY, .dst = hd, .src = hs, .n = count};
    LOCKED_RETURN(enqueue(s, &t));
}

#ifndef STUB_OMIT_REQUIRED
STUB_API aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
    ENTER();
    if (count == 0) return ACL_SUCCESS; /* memory.cpp:742 */
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    void *hp;
    stub_stream *s;
    if (!r) r = check_set(__func__, devPtr, maxCount, count, &hp);
    if (!r) r = resolve_stream(__func__, stream, 1, &s);
    if (r) LOCKED_RETURN(r);
    task t = {.type = TASK_SET, .dst = hp, .n = count, .value = value};
    LOCKED_RETURN(enqueue(s, &t));
}
#endif

#ifndef STUB_OMIT_OPTIONAL
/* aclrtSetStreamFailureMode: hicann/runtime src/runtime/api/impl/
 * api_impl.cc:1991-2034. Bit 0 of mode counts; the same mode again
 * succeeds; stop back to continue is 207000; a stream of another context
 * is 107003. NULL is the current context's default stream. */
STUB_API aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode) {
    ENTER();
    pthread_mutex_lock(&g_mu);
    stub_ctx *c;
    aclError r = need_init_ctx(__func__, &c);
    stub_stream *s;
    if (!r) r = resolve_stream(__func__, stream, 0, &s);
    if (r) LOCKED_RETURN(r);
    int stop = (int)(mode & 1u);
    if (s->stop == stop) LOCKED_RETURN(ACL_SUCCESS);
    if (!stop)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, __func__,
                                "changing stream %p from stop mode to continue mode is not supported", stream));
    if (s->ctx != c)
        LOCKED_RETURN(stub_fail(ACL_ERROR_RT_STREAM_CONTEXT, __func__, "stream %p belongs to another context", stream));
    s->stop = 1;
    c->stop_mode = 1;
    LOCKED_RETURN(ACL_SUCCESS);
}
#endif

/* ---- test controls ---- */

/* stub_fail_task makes the k-th task enqueued on stream from now (k >= 1)
 * fail with code (what the failure does follows the stream's failure
 * mode). NULL is the current context's default stream. */
STUB_API aclError stub_fail_task(aclrtStream stream, uint64_t k, aclError code) {
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    stub_stream *s;
    if (!r) r = resolve_stream(__func__, stream, 0, &s);
    if (r) LOCKED_RETURN(r);
    s->fail_k = k;
    s->fail_code = code ? code : ACL_ERROR_RT_TS_ERROR;
    LOCKED_RETURN(ACL_SUCCESS);
}

/* stub_hold_stream enqueues on stream a task that keeps it busy until
 * stub_release_hold(*token): the tasks behind it stay pending, which makes
 * timeouts, incomplete events and ordering observable. NULL is the current
 * context's default stream. */
STUB_API aclError stub_hold_stream(aclrtStream stream, uint64_t *token) {
    pthread_mutex_lock(&g_mu);
    aclError r = need_init(__func__);
    stub_stream *s;
    if (!r) r = resolve_stream(__func__, stream, 0, &s);
    if (r) LOCKED_RETURN(r);
    if (!token) LOCKED_RETURN(stub_fail(ACL_ERROR_INVALID_PARAM, __func__, "token is NULL"));
    stub_event *g = calloc(1, sizeof *g);
    if (!g) LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
    g->alive = 1;
    g->record_seq = 1;
    g->handle = table_add(&g_gates, GATE_BASE, g);
    if (!g->handle) {
        free(g);
        LOCKED_RETURN(stub_fail(ACL_ERROR_BAD_ALLOC, __func__, "out of host memory"));
    }
    task t = {.type = TASK_WAIT, .ev = g, .seq = 1};
    if ((r = enqueue(s, &t))) LOCKED_RETURN(r);
    *token = g->handle;
    LOCKED_RETURN(ACL_SUCCESS);
}

/* stub_release_hold ends a hold; releasing twice, or after aclFinalize, is
 * harmless. */
STUB_API aclError stub_release_hold(uint64_t token) {
    pthread_mutex_lock(&g_mu);
    stub_event *g = table_get(&g_gates, GATE_BASE, token);
    if (g && g->reached_seq < 1) {
        g->reached_seq = 1;
        pump();
    }
    LOCKED_RETURN(ACL_SUCCESS);
}
