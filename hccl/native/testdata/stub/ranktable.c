/* Rank tables for the stub's HcclCommInitClusterInfo: a small JSON reader
 * and the checks of HCCL's parser with its result codes, the same rules
 * as package hccl/ranktable (docs/misuse.md, "Rank tables"). The stub
 * reads versions 1.0 and 1.2; a status other than "completed" is re-read
 * every 50 ms for at most 2 s (HCCL: every 1 s for 30 min), then
 * HCCL_E_TIMEOUT. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stub.h"

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
    int type;
    char *str;       /* J_STR */
    int n;           /* children */
    char **keys;     /* J_OBJ */
    struct jv **kid; /* J_ARR, J_OBJ */
};

static void jfree(struct jv *v)
{
    if (v == NULL)
        return;
    for (int i = 0; i < v->n; i++) {
        if (v->keys)
            free(v->keys[i]);
        jfree(v->kid[i]);
    }
    free(v->keys);
    free(v->kid);
    free(v->str);
    free(v);
}

struct jp {
    const char *p, *end;
    int depth;
};

static void ws(struct jp *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static char *jstring(struct jp *s)
{
    if (s->p >= s->end || *s->p != '"')
        return NULL;
    s->p++;
    size_t cap = 16, len = 0;
    char *out = malloc(cap);
    while (out != NULL && s->p < s->end && *s->p != '"') {
        char c = *s->p++;
        if ((unsigned char)c < 0x20) {
            free(out);
            return NULL;
        }
        if (c == '\\') {
            if (s->p >= s->end) {
                free(out);
                return NULL;
            }
            c = *s->p++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u':
                if (s->end - s->p < 4) {
                    free(out);
                    return NULL;
                }
                for (int i = 0; i < 4; i++)
                    if (!isxdigit((unsigned char)s->p[i])) {
                        free(out);
                        return NULL;
                    }
                s->p += 4;
                c = '?'; /* the checks never need non-ASCII text */
                break;
            case '"': case '\\': case '/': break;
            default:
                free(out);
                return NULL;
            }
        }
        if (len + 2 > cap) {
            char *nb = realloc(out, cap *= 2);
            if (nb == NULL) {
                free(out);
                return NULL;
            }
            out = nb;
        }
        out[len++] = c;
    }
    if (out == NULL || s->p >= s->end) {
        free(out);
        return NULL;
    }
    s->p++;
    out[len] = '\0';
    return out;
}

static struct jv *jvalue(struct jp *s);

static int jadd(struct jv *v, char *key, struct jv *kid)
{
    char **nk = v->type == J_OBJ ? realloc(v->keys, (v->n + 1) * sizeof *nk) : NULL;
    if (v->type == J_OBJ) {
        if (nk == NULL)
            return 0;
        v->keys = nk;
    }
    struct jv **nv = realloc(v->kid, (v->n + 1) * sizeof *nv);
    if (nv == NULL)
        return 0;
    v->kid = nv;
    if (v->type == J_OBJ)
        v->keys[v->n] = key;
    v->kid[v->n++] = kid;
    return 1;
}

static struct jv *jvalue(struct jp *s)
{
    ws(s);
    if (s->p >= s->end || ++s->depth > 64)
        return NULL;
    struct jv *v = calloc(1, sizeof *v);
    if (v == NULL)
        return NULL;
    char c = *s->p;
    if (c == '{' || c == '[') {
        v->type = c == '{' ? J_OBJ : J_ARR;
        s->p++;
        ws(s);
        if (s->p < s->end && *s->p == (c == '{' ? '}' : ']')) {
            s->p++;
            s->depth--;
            return v;
        }
        for (;;) {
            char *key = NULL;
            if (v->type == J_OBJ) {
                ws(s);
                key = jstring(s);
                ws(s);
                if (key == NULL || s->p >= s->end || *s->p != ':') {
                    free(key);
                    jfree(v);
                    return NULL;
                }
                s->p++;
            }
            struct jv *kid = jvalue(s);
            if (kid == NULL || !jadd(v, key, kid)) {
                free(key);
                jfree(kid);
                jfree(v);
                return NULL;
            }
            ws(s);
            if (s->p < s->end && *s->p == ',') {
                s->p++;
                continue;
            }
            if (s->p < s->end && *s->p == (v->type == J_OBJ ? '}' : ']')) {
                s->p++;
                s->depth--;
                return v;
            }
            jfree(v);
            return NULL;
        }
    }
    if (c == '"') {
        v->type = J_STR;
        if ((v->str = jstring(s)) == NULL) {
            free(v);
            return NULL;
        }
    } else if (s->end - s->p >= 4 && strncmp(s->p, "true", 4) == 0) {
        v->type = J_BOOL, s->p += 4;
    } else if (s->end - s->p >= 5 && strncmp(s->p, "false", 5) == 0) {
        v->type = J_BOOL, s->p += 5;
    } else if (s->end - s->p >= 4 && strncmp(s->p, "null", 4) == 0) {
        v->type = J_NULL, s->p += 4;
    } else if (c == '-' || isdigit((unsigned char)c)) {
        v->type = J_NUM;
        char *e;
        errno = 0;
        (void)strtod(s->p, &e);
        if (e == s->p || e > s->end) {
            free(v);
            return NULL;
        }
        s->p = e;
    } else {
        free(v);
        return NULL;
    }
    s->depth--;
    return v;
}

static struct jv *jget(const struct jv *o, const char *key)
{
    if (o == NULL || o->type != J_OBJ)
        return NULL;
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return o->kid[i];
    return NULL;
}

/* jstr: member key as a string: HCCL_E_NOT_FOUND absent, HCCL_E_PARA not a string. */
static HcclResult jstr(const struct jv *o, const char *key, const char **out)
{
    const struct jv *v = jget(o, key);
    if (v == NULL)
        return HCCL_E_NOT_FOUND;
    if (v->type != J_STR)
        return HCCL_E_PARA;
    *out = v->str;
    return HCCL_SUCCESS;
}

/* SalStrToULong: std::stoull base 10, then at most 0xFFFFFFFF. */
static int stoul(const char *s, uint32_t *out)
{
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    int neg = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!isdigit((unsigned char)*s))
        return 0;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*s); s++) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (neg)
        v = (uint64_t)0 - v;
    if (v > 0xFFFFFFFFull)
        return 0;
    *out = (uint32_t)v;
    return 1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = 2 * cap + 8192;
            char *nb = cap > (64u << 20) ? NULL : realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t k = fread(buf + len, 1, 4096, f);
        len += k;
        if (k < 4096)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

static int in_list(char **list, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* parse_body: the checks of GetServerList / GetSingleDevice /
 * GetSuperPodList; fills ids with the rank ids in table order. */
static HcclResult parse_body(const struct jv *top, uint32_t **ids_out, uint32_t *n_out)
{
    const char *ver;
    HcclResult rc = jstr(top, "version", &ver);
    if (rc == HCCL_E_NOT_FOUND)
        return HCCL_E_NOT_SUPPORT;
    if (rc != HCCL_SUCCESS)
        return rc;
    if (strcmp(ver, "1.0") != 0 && strcmp(ver, "1.2") != 0)
        return HCCL_E_NOT_SUPPORT;
    const struct jv *sl = jget(top, "server_list");
    if (sl == NULL)
        return HCCL_E_NOT_FOUND;
    if (sl->type != J_ARR || sl->n == 0)
        return HCCL_E_PARA;
    const char *sc;
    rc = jstr(top, "server_count", &sc);
    if (rc == HCCL_E_PARA)
        return rc;
    if (rc == HCCL_SUCCESS) {
        uint32_t v;
        if (!stoul(sc, &v) || v != (uint32_t)sl->n)
            return HCCL_E_PARA;
    }
    int cap = 0, n = 0, nsv = 0, nip = 0, ipcap = 0, first_ips = -1;
    uint32_t *ids = NULL;
    char **svids = calloc((size_t)sl->n, sizeof *svids), **ips = NULL;
    rc = svids == NULL ? HCCL_E_MEMORY : HCCL_SUCCESS;
    for (int i = 0; rc == HCCL_SUCCESS && i < sl->n; i++) {
        const struct jv *sv = sl->kid[i];
        const char *sid;
        if (sv->type != J_OBJ) {
            rc = HCCL_E_PARA;
            break;
        }
        if ((rc = jstr(sv, "server_id", &sid)) != HCCL_SUCCESS)
            break;
        if (sid[0] == '\0' || strlen(sid) > 64 || in_list(svids, nsv, sid)) {
            rc = HCCL_E_PARA;
            break;
        }
        svids[nsv++] = (char *)sid;
        const struct jv *dl = jget(sv, "device");
        if (dl == NULL) {
            rc = HCCL_E_NOT_FOUND;
            break;
        }
        if (dl->type != J_ARR || dl->n == 0) {
            rc = HCCL_E_PARA;
            break;
        }
        for (int j = 0; rc == HCCL_SUCCESS && j < dl->n; j++) {
            const struct jv *d = dl->kid[j];
            const char *rid, *did, *dip;
            uint32_t dev, id;
            if (d->type != J_OBJ) {
                rc = HCCL_E_PARA;
                break;
            }
            if ((rc = jstr(d, "rank_id", &rid)) != HCCL_SUCCESS || (rc = jstr(d, "device_id", &did)) != HCCL_SUCCESS)
                break;
            if (!stoul(did, &dev) || dev > 15) {
                rc = HCCL_E_PARA;
                break;
            }
            HcclResult ipr = jstr(d, "device_ip", &dip);
            int nips = 0;
            if (ipr == HCCL_E_PARA || (ipr == HCCL_E_NOT_FOUND && sl->n > 1)) {
                rc = HCCL_E_PARA;
                break;
            }
            if (ipr == HCCL_SUCCESS) {
                char *copy = strdup(dip), *save = NULL;
                for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok != NULL; tok = strtok_r(NULL, ",", &save)) {
                    if (in_list(ips, nip, tok)) {
                        rc = HCCL_E_PARA;
                        break;
                    }
                    if (nip == ipcap) {
                        char **ni = realloc(ips, (size_t)(ipcap = 2 * ipcap + 8) * sizeof *ni);
                        if (ni == NULL) {
                            rc = HCCL_E_MEMORY;
                            break;
                        }
                        ips = ni;
                    }
                    ips[nip++] = strdup(tok);
                    nips++;
                }
                free(copy);
                if (rc != HCCL_SUCCESS)
                    break;
            }
            if (first_ips < 0)
                first_ips = nips;
            if (nips != first_ips || !stoul(rid, &id)) {
                rc = HCCL_E_PARA;
                break;
            }
            if (n == cap) {
                uint32_t *ni = realloc(ids, (size_t)(cap = 2 * cap + 8) * sizeof *ni);
                if (ni == NULL) {
                    rc = HCCL_E_MEMORY;
                    break;
                }
                ids = ni;
            }
            ids[n++] = id;
        }
    }
    /* version 1.2: super_pod_list servers must be servers of the table. */
    const struct jv *pods = jget(top, "super_pod_list");
    if (rc == HCCL_SUCCESS && strcmp(ver, "1.2") == 0 && pods != NULL) {
        if (pods->type != J_ARR)
            rc = HCCL_E_PARA;
        for (int i = 0; rc == HCCL_SUCCESS && i < pods->n; i++) {
            const struct jv *ps = jget(pods->kid[i], "server_list");
            if (ps == NULL) {
                rc = HCCL_E_NOT_FOUND;
                break;
            }
            for (int j = 0; rc == HCCL_SUCCESS && ps->type == J_ARR && j < ps->n; j++) {
                const char *sid;
                if (jstr(ps->kid[j], "server_id", &sid) != HCCL_SUCCESS || !in_list(svids, nsv, sid))
                    rc = HCCL_E_PARA;
            }
        }
    }
    for (int i = 0; i < nip; i++)
        free(ips[i]);
    free(ips);
    free(svids);
    if (rc != HCCL_SUCCESS) {
        free(ids);
        return rc;
    }
    *ids_out = ids;
    *n_out = (uint32_t)n;
    return HCCL_SUCCESS;
}

/* stub_ranktable_load loads path as HcclCommInitClusterInfo does and
 * checks rank; *n is the table's size. */
HcclResult stub_ranktable_load(const char *path, uint32_t rank, uint32_t *n)
{
    size_t pl = strlen(path);
    if (pl == 0)
        return HCCL_E_PARA;
    if (pl < 5 || strcmp(path + pl - 5, ".json") != 0)
        return HCCL_E_INTERNAL;
    char *real = realpath(path, NULL);
    if (real == NULL)
        return HCCL_E_PARA;
    struct jv *top = NULL;
    HcclResult rc = HCCL_SUCCESS;
    for (int tries = 0;; tries++) {
        char *buf = slurp(real);
        if (buf == NULL) {
            rc = HCCL_E_PARA;
            break;
        }
        struct jp s = {buf, buf + strlen(buf), 0};
        top = jvalue(&s);
        ws(&s);
        if (top != NULL && (s.p != s.end || top->type != J_OBJ)) {
            jfree(top);
            top = NULL;
        }
        free(buf);
        if (top == NULL) {
            rc = HCCL_E_PARA;
            break;
        }
        const char *st;
        if ((rc = jstr(top, "status", &st)) != HCCL_SUCCESS || strcmp(st, "completed") == 0)
            break;
        jfree(top);
        top = NULL;
        if (tries >= 40) {
            rc = HCCL_E_TIMEOUT;
            break;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    free(real);
    uint32_t *ids = NULL, cnt = 0;
    if (rc == HCCL_SUCCESS)
        rc = parse_body(top, &ids, &cnt);
    jfree(top);
    if (rc != HCCL_SUCCESS)
        return rc;
    qsort(ids, cnt, sizeof *ids, cmp_u32);
    if (rank >= cnt)
        rc = HCCL_E_PARA;
    else if (ids[rank] != rank)
        rc = HCCL_E_UNAVAIL;
    for (uint32_t i = 0; rc == HCCL_SUCCESS && i < cnt; i++)
        if (ids[i] != i)
            rc = HCCL_E_PARA;
    free(ids);
    *n = cnt;
    return rc;
}
