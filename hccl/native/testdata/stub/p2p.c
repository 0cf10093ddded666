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
    if (dt_size(dt) == 0 || peer >= c->g->n || peer == c->rank)
        return HCCL_E_PARA;
    if (buf == NULL && count > 0)
        return HCCL_E_PTR;
    return HCCL_SUCCESS;
}

EXPORT HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm,
                           aclrtStream stream)
{
    (void)stream;
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    if (rc == HCCL_SUCCESS)
        rc = check_p2p(c, sendBuf, count, dataType, destRank);
    if (rc == HCCL_SUCCESS && count > 0) {
        struct timespec dl = deadline_for(c->g);
        rc = await(c->g, post(c->g, c->rank, destRank, sendBuf, count, dataType), &dl);
    }
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

EXPORT HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm,
                           aclrtStream stream)
{
    (void)stream;
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    if (rc == HCCL_SUCCESS)
        rc = check_p2p(c, recvBuf, count, dataType, srcRank);
    if (rc == HCCL_SUCCESS && count > 0) {
        struct timespec dl = deadline_for(c->g);
        rc = receive(c->g, srcRank, c->rank, recvBuf, count, dataType, &dl);
    }
    pthread_mutex_unlock(&stub_mu);
    return rc;
}

/* BatchSendRecv posts every send, then serves every receive in item order,
 * then waits until its sends were received: no order of items deadlocks. */
EXPORT HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                    aclrtStream stream)
{
    (void)stream;
    if (sendRecvInfo == NULL && itemNum > 0)
        return HCCL_E_PTR;
    pthread_mutex_lock(&stub_mu);
    struct comm *c;
    HcclResult rc = comm_get(comm, &c);
    for (uint32_t i = 0; rc == HCCL_SUCCESS && i < itemNum; i++) {
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        if (it->sendRecvType != HCCL_SEND && it->sendRecvType != HCCL_RECV)
            rc = HCCL_E_PARA;
        else
            rc = check_p2p(c, it->buf, it->count, it->dataType, it->remoteRank);
    }
    if (rc != HCCL_SUCCESS) {
        pthread_mutex_unlock(&stub_mu);
        return rc;
    }
    struct group *g = c->g;
    struct timespec dl = deadline_for(g);
    struct msg **sent = xcalloc(itemNum, sizeof *sent);
    for (uint32_t i = 0; i < itemNum; i++) {
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        if (it->sendRecvType == HCCL_SEND && it->count > 0)
            sent[i] = post(g, c->rank, it->remoteRank, it->buf, it->count, it->dataType);
    }
    for (uint32_t i = 0; i < itemNum; i++) {
        const HcclSendRecvItem *it = &sendRecvInfo[i];
        if (it->sendRecvType == HCCL_RECV && it->count > 0) {
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
    pthread_mutex_unlock(&stub_mu);
    return rc;
}
