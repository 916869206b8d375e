/* gasnet_coll.h: the GASNet-EX specification's header for the collectives
 * (gex_Coll_BroadcastNB, gex_Coll_ReduceToOneNB, gex_Coll_ReduceToAllNB,
 * gex_Coll_ReduceFn_t). gasnet-ofi's gasnetex.h declares them already, so
 * this header includes it: a program may include either or both
 * (docs/c-api.md).
 *
 * Of GASNet-1's collectives prototype (which GASNet-EX dropped) it
 * provides gasnet_coll_init, GASNET_TEAM_ALL, the team queries, the
 * broadcast (blocking and _nb, complete on return) and the syncs, one
 * image per node; the scatter, gather, gather_all, exchange, reduce and
 * scan and the M (multiple-address) forms are not provided. */
#ifndef GASNET_COLL_H
#define GASNET_COLL_H
#include <gasnetex.h>

GASNETT_BEGIN_EXTERNC

/* ---- GASNet-1's collectives prototype (the part provided) ---------------- */
#define GASNET_COLL_IN_NOSYNC (1 << 0)
#define GASNET_COLL_IN_MYSYNC (1 << 1)
#define GASNET_COLL_IN_ALLSYNC (1 << 2)
#define GASNET_COLL_OUT_NOSYNC (1 << 3)
#define GASNET_COLL_OUT_MYSYNC (1 << 4)
#define GASNET_COLL_OUT_ALLSYNC (1 << 5)
#define GASNET_COLL_SYNC_FLAG_MASK (0x3F)
#define GASNET_COLL_SINGLE (1 << 6)
#define GASNET_COLL_LOCAL (1 << 7)
#define GASNET_COLL_AGGREGATE (1 << 8)
#define GASNET_COLL_DST_IN_SEGMENT (1 << 10)
#define GASNET_COLL_SRC_IN_SEGMENT (1 << 11)

typedef uint32_t gasnet_image_t;
typedef gex_TM_t gasnet_team_handle_t;
typedef gex_Event_t gasnet_coll_handle_t;
#define GASNET_COLL_INVALID_HANDLE ((gasnet_coll_handle_t)0)

/* The job's team (gasnet.h's primordial team). */
extern gex_TM_t gasnetc_legacy_tm(void);
#define GASNET_TEAM_ALL gasnetc_legacy_tm()
#define gasnet_coll_team_rank2node(team, rank) gex_TM_TranslateRankToJobrank(team, rank)
#define gasnet_coll_team_node2rank(team, node) gex_TM_TranslateJobrankToRank(team, node)
#define gasnet_coll_team_size(team) gex_TM_QuerySize(team)

/* Collective, once, after gasnet_attach: images NULL (one image per node),
 * init_flags 0; fn_tbl (for the reductions, not provided) is not read. */
extern void gasnet_coll_init(gasnet_image_t *images, gasnet_image_t my_image, void *fn_tbl,
                             size_t fn_count, int init_flags);
/* nbytes (at least 1) from src on image srcimage to dst on every image of
 * team; flags: exactly one IN_*SYNC, one OUT_*SYNC and SINGLE or LOCAL. */
extern void gasnet_coll_broadcast(gasnet_team_handle_t team, void *dst, gasnet_image_t srcimage,
                                  void *src, size_t nbytes, int flags);
/* The same, complete on return: GASNET_COLL_INVALID_HANDLE. */
extern gasnet_coll_handle_t gasnet_coll_broadcast_nb(gasnet_team_handle_t team, void *dst,
                                                     gasnet_image_t srcimage, void *src,
                                                     size_t nbytes, int flags);
#define gasnet_coll_wait_sync(handle) gex_Event_Wait(handle)
#define gasnet_coll_try_sync(handle) gex_Event_Test(handle)
#define gasnet_coll_wait_sync_all(phandle, numhandles) gex_Event_WaitAll(phandle, numhandles, 0)
#define gasnet_coll_try_sync_all(phandle, numhandles) gex_Event_TestAll(phandle, numhandles, 0)
#define gasnet_coll_wait_sync_some(phandle, numhandles) gex_Event_WaitSome(phandle, numhandles, 0)
#define gasnet_coll_try_sync_some(phandle, numhandles) gex_Event_TestSome(phandle, numhandles, 0)

GASNETT_END_EXTERNC
#endif /* GASNET_COLL_H */
