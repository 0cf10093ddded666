/* Point to point: a send is posted on the channel src→dst with the next
 * sequence number and waits until the receive with the same number copied
 * it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"

static struct msg *post(struct group *g, uint32_t src, uint32_t dst, const void *buf, uint64_t count, int dt)
{
    struct msg *m = xcalloc(1, sizeof *m);
    m->src = src;
    m->dst = dst;
    m->seq = g->sendseq[src * g->n + dst]++;
    m->buf = buf;
    m->count = count;
    m->dt = dt;
    m->next = g->msgs;
    g->msgs = m;
    stub_live++;
    pthread_cond_broadcast(&stub_cv);
    return m;
}

static void unlink_msg(struct group *g, struct msg *m)
{
    for (struct msg **p = &g->msgs; *p != NULL; p = &(*p)->next) {
        if (*p == m) {
            *p = m->next;
            free(m);
            stub_live--;
            return;
        }
    }
}

/* receive waits for the next message from src and copies it into buf. */
static HcclResult receive(struct group *g, uint32_t src, uint32_t dst, void *buf, uint64_t count, int dt,
                          const struct timespec *dl)
{
    uint64_t seq = g->recvseq[src * g->n + dst]++;
    for (;;) {
        for (struct msg *m = g->msgs; m != NULL; m = m->next) {
            if (m->src != src || m->dst != dst || m->seq != seq || m->state != 0)
                continue;
            if (m->count != count || m->dt != dt) {
                m->result = HCCL_E_PARA;
            } else {
                memcpy(buf, m->buf, count * dt_size(dt));
                m->result = HCCL_SUCCESS;
            }
            m->state = 1;
            pthread_cond_broadcast(&stub_cv);
            return m->result;
        }
        if (stub_wait(dl) == ETIMEDOUT)
            return HCCL_E_TIMEOUT;
    }
}

/* await waits until m was received; on timeout it withdraws m. */
static HcclResult await(struct group *g, struct msg *m, const struct timespec *dl)
{
    while (m->state == 0) {
        if (stub_wait(dl) == ETIMEDOUT && m->state == 0) {
            unlink_msg(g, m);
            return HCCL_E_TIMEOUT;
        }
    }
    HcclResult rc = m->result;
    unlink_msg(g, m);
    return rc;
}

static HcclResult check_p2p(struct comm *c, const void *buf, uint64_t count, int dt, uint32_t peer)
{
    if (dt_size(dt) == 0)
        return HCCL_E_NOT_SUPPORT; /* param_check.cc:281-291 */
    if (count > 0x7FFFFFFFFull || peer >= c->g->n || peer == c->rank)
        return HCCL_E_PARA;
    if (buf == NULL && count > 0)
        return HCCL_E_PTR;
    return HCCL_SUCCESS;
}

EXPORT HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm,
                           aclrtStream stream)
{
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    if (rc == HCCL_SUCCESS)
        rc = check_p2p(c, sendBuf, count, dataType, destRank);
    if (rc == HCCL_SUCCESS && count > 0 && stream == NULL)
        rc = HCCL_E_PTR;
    if (rc == HCCL_SUCCESS && count > 0)
        rc = ccl_buffer(c);
    struct timespec start;
    if (rc == HCCL_SUCCESS && count > 0 && !op_begin(c, stream, &start)) {
        struct timespec dl = deadline_for(c->g);
        rc = op_outcome(c, stream, await(c->g, post(c->g, c->rank, destRank, sendBuf, count, dataType), &dl), &start);
    }
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

EXPORT HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm,
                           aclrtStream stream)
{
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    if (rc == HCCL_SUCCESS)
        rc = check_p2p(c, recvBuf, count, dataType, srcRank);
    if (rc == HCCL_SUCCESS && count > 0 && stream == NULL)
        rc = HCCL_E_PTR;
    if (rc == HCCL_SUCCESS && count > 0)
        rc = ccl_buffer(c);
    struct timespec start;
    if (rc == HCCL_SUCCESS && count > 0 && !op_begin(c, stream, &start)) {
        struct timespec dl = deadline_for(c->g);
        rc = op_outcome(c, stream, receive(c->g, srcRank, c->rank, recvBuf, count, dataType, &dl), &start);
    }
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

/* BatchSendRecv posts every send, then serves every receive in item order,
 * then waits until its sends were received: no order of items deadlocks. */
EXPORT HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                    aclrtStream stream)
{
    if (sendRecvInfo == NULL && itemNum > 0)
        return HCCL_E_PTR;
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    /* Items naming this rank pair among themselves, the k-th send with the
     * k-th receive, and are a local copy; an unmatched one is HCCL_E_PARA
     * (coll_batch_send_recv_executor.cc:118-150). */
    uint32_t self_send = 0, self_recv = 0;
    for (uint32_t i = 0; rc == HCCL_SUCCESS && i < itemNum; i++) {
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        if (it->sendRecvType != HCCL_SEND && it->sendRecvType != HCCL_RECV)
            rc = HCCL_E_PARA;
        else if (it->remoteRank == c->rank) {
            rc = dt_size(it->dataType) == 0 ? HCCL_E_NOT_SUPPORT : (it->buf == NULL && it->count > 0) ? HCCL_E_PTR : HCCL_SUCCESS;
            if (it->count > 0)
                *(it->sendRecvType == HCCL_SEND ? &self_send : &self_recv) += 1;
        } else
            rc = check_p2p(c, it->buf, it->count, it->dataType, it->remoteRank);
    }
    if (rc == HCCL_SUCCESS && self_send != self_recv)
        rc = HCCL_E_PARA;
    for (uint32_t k = 0, si = 0, ri = 0; rc == HCCL_SUCCESS && k < self_send; k++, si++, ri++) {
        while (sendRecvInfo[si].remoteRank != c->rank || sendRecvInfo[si].sendRecvType != HCCL_SEND || sendRecvInfo[si].count == 0)
            si++;
        while (sendRecvInfo[ri].remoteRank != c->rank || sendRecvInfo[ri].sendRecvType != HCCL_RECV || sendRecvInfo[ri].count == 0)
            ri++;
        if (sendRecvInfo[si].count != sendRecvInfo[ri].count || sendRecvInfo[si].dataType != sendRecvInfo[ri].dataType)
            rc = HCCL_E_PARA;
    }
    if (rc == HCCL_SUCCESS && stream == NULL)
        rc = HCCL_E_PTR;
    if (rc == HCCL_SUCCESS)
        rc = ccl_buffer(c);
    struct timespec start;
    if (rc != HCCL_SUCCESS || op_begin(c, stream, &start)) {
        pthread_mutex_unlock(&stub_mu);
        return rc;
    }
    struct group *g = c->g;
    for (uint32_t k = 0, si = 0, ri = 0; k < self_send; k++, si++, ri++) {
        while (sendRecvInfo[si].remoteRank != c->rank || sendRecvInfo[si].sendRecvType != HCCL_SEND || sendRecvInfo[si].count == 0)
            si++;
        while (sendRecvInfo[ri].remoteRank != c->rank || sendRecvInfo[ri].sendRecvType != HCCL_RECV || sendRecvInfo[ri].count == 0)
            ri++;
        memmove(sendRecvInfo[ri].buf, sendRecvInfo[si].buf, sendRecvInfo[si].count * dt_size(sendRecvInfo[si].dataType));
    }
    struct timespec dl = deadline_for(g);
    struct msg **sent = xcalloc(itemNum, sizeof *sent);
    for (uint32_t i = 0; i < itemNum; i++) {
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        if (it->sendRecvType == HCCL_SEND && it->count > 0 && it->remoteRank != c->rank)
            sent[i] = post(g, c->rank, it->remoteRank, it->buf, it->count, it->dataType);
    }
    for (uint32_t i = 0; i < itemNum; i++) {
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        if (it->sendRecvType == HCCL_RECV && it->count > 0 && it->remoteRank != c->rank) {
            HcclResult r = receive(g, it->remoteRank, c->rank, it->buf, it->count, it->dataType, &dl);
            if (rc == HCCL_SUCCESS)
                rc = r;
        }
    }
    for (uint32_t i = 0; i < itemNum; i++) {
        if (sent[i] != NULL) {
            HcclResult r = await(g, sent[i], &dl);
            if (rc == HCCL_SUCCESS)
                rc = r;
        }
    }
    free(sent);
    rc = op_outcome(c, stream, rc, &start);
    pthread_mutex_unlock(&stub_mu);
    return rc;
}
