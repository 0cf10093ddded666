/* Streams and where failures surface (docs/misuse.md, HCCL; the source
 * rows are in hccl-vs-source.md, "where failures surface").
 *
 * The stub runs every operation at the call, but reports its outcome as
 * the device does: the first operation of a communicator builds the links
 * and checks that every rank issued the same one (HCCL_DFS_CONFIG
 * inconsistent_check, default first: a disagreement is HCCL_E_INTERNAL,
 * rank_consistentcy_checker.cc:195-243), and a missing rank is
 * HCCL_E_TIMEOUT at the call. Later operations return HCCL_SUCCESS; a
 * disagreement or a missing rank fails the stream instead, and the test
 * hook HcclStubStreamSync (the stub's aclrtSynchronizeStream) returns
 * 507048 (ACL_ERROR_RT_FFTS_PLUS_TIMEOUT) no earlier than the exec timeout
 * after the operation began. The communicator is unusable after: its
 * later operations fail their streams the same way.
 * HcclGetCommAsyncError reports HCCL_E_PARA for a later disagreement only
 * with inconsistent_check:on (heartbeat.cc:2082-2106). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stub.h"

#define STREAM_MAGIC 0x5354524du
#define RT_FFTS_PLUS_TIMEOUT 507048

struct stub_stream {
    uint32_t magic;
    int failed;
    struct timespec fail_at; /* CLOCK_MONOTONIC */
};

EXPORT void *HcclStubStreamCreate(void)
{
    struct stub_stream *s = xcalloc(1, sizeof *s);
    s->magic = STREAM_MAGIC;
    return s;
}

EXPORT void HcclStubStreamDestroy(void *stream)
{
    struct stub_stream *s = stream;
    if (s != NULL && s->magic == STREAM_MAGIC) {
        s->magic = 0;
        free(s);
    }
}

/* HcclStubStreamSync waits for the stream's failure to surface and
 * returns its code (0 when the stream did not fail). */
EXPORT int HcclStubStreamSync(void *stream)
{
    struct stub_stream *s = stream;
    if (s == NULL || s->magic != STREAM_MAGIC)
        return 107003; /* ACL_ERROR_RT_STREAM_CONTEXT? an invalid handle */
    pthread_mutex_lock(&stub_mu);
    int failed = s->failed;
    struct timespec at = s->fail_at;
    pthread_mutex_unlock(&stub_mu);
    if (!failed)
        return 0;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0) {
    }
    return RT_FFTS_PLUS_TIMEOUT;
}

/* Test hook: the mode as HCCL_DFS_CONFIG would set it (a Go test cannot
 * change the C environment of a purego process); -2 reads the environment. */
static int g_mode_override = -2;

EXPORT void HcclStubSetInconsistentCheck(int mode)
{
    pthread_mutex_lock(&stub_mu);
    g_mode_override = mode;
    pthread_mutex_unlock(&stub_mu);
}

/* check_mode reads inconsistent_check of HCCL_DFS_CONFIG as
 * env_config.cc:642-740 does: 1 on, 0 first (the default, also for an
 * unknown value), -1 off. */
int check_mode(void)
{
    if (g_mode_override != -2)
        return g_mode_override;
    const char *e = getenv("HCCL_DFS_CONFIG");
    if (e == NULL)
        return 0;
    char buf[256];
    size_t j = 0;
    for (size_t i = 0; e[i] != 0 && j + 1 < sizeof buf; i++)
        if (e[i] != ' ')
            buf[j++] = (char)(e[i] >= 'A' && e[i] <= 'Z' ? e[i] - 'A' + 'a' : e[i]);
    buf[j] = 0;
    const char *k = strstr(buf, "inconsistent_check:");
    if (k == NULL)
        return 0;
    k += strlen("inconsistent_check:");
    size_t n = strcspn(k, ",");
    if (n == 2 && strncmp(k, "on", 2) == 0)
        return 1;
    if (n == 3 && strncmp(k, "off", 3) == 0)
        return -1;
    return 0;
}

/* stream_fail makes the stream's synchronize fail at start + the
 * communicator's exec timeout. Call with stub_mu held. */
static void stream_fail(struct comm *c, aclrtStream stream, const struct timespec *start)
{
    struct stub_stream *s = stream;
    if (s == NULL || s->magic != STREAM_MAGIC || s->failed)
        return;
    struct timespec dl = deadline_for(c->g); /* now + timeout */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    /* shift to start + timeout */
    long long ns = (long long)(dl.tv_sec - now.tv_sec) * 1000000000LL + (dl.tv_nsec - now.tv_nsec);
    long long at = (long long)start->tv_sec * 1000000000LL + start->tv_nsec + ns;
    s->fail_at.tv_sec = at / 1000000000LL;
    s->fail_at.tv_nsec = at % 1000000000LL;
    s->failed = 1;
}

int stream_valid(aclrtStream stream)
{
    const struct stub_stream *s = stream;
    return s != NULL && s->magic == STREAM_MAGIC;
}

int op_begin(struct comm *c, aclrtStream stream, struct timespec *start)
{
    clock_gettime(CLOCK_MONOTONIC, start);
    if (!c->broken)
        return 0;
    stream_fail(c, stream, start);
    return 1;
}

HcclResult op_outcome(struct comm *c, aclrtStream stream, HcclResult rc, const struct timespec *start)
{
    int first = !c->linked;
    int mode = check_mode();
    if (rc == HCCL_SUCCESS) {
        c->linked = 1;
        return rc;
    }
    if (first && rc == HCCL_E_PARA && mode >= 0) { /* the ranks disagree */
        c->linked = 1;
        return HCCL_E_INTERNAL;
    }
    if (first && rc != HCCL_E_PARA)
        return rc; /* no link: HCCL_E_TIMEOUT */
    c->linked = 1;
    if (rc == HCCL_E_PARA && mode > 0 && c->async_err == HCCL_SUCCESS)
        c->async_err = HCCL_E_PARA;
    c->broken = 1;
    stream_fail(c, stream, start);
    return HCCL_SUCCESS;
}
