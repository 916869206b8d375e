/*
 * gasnetex.h: the GASNet-EX C API of gasnet-ofi (the SEQ library).
 *
 * Written for this project from the GASNet-EX specification (API spec
 * 0.13, GASNet-EX.txt) and GASNet-1's legacy names: the names, signatures
 * and meanings are GASNet's; the code and the constants' values are ours.
 * Link with `pkg-config --libs gasnet-ofi-seq`; run with `gasnetrun-ofi`.
 * What is provided and what is not: docs/c-api.md.
 *
 * The gex_AM_{Request,Reply}{Short,Medium,Long}N and
 * gex_AM_Commit{Request,Reply}{Medium,Long}N families (N = 0..16) are
 * static inline functions over one entry point per category; they were
 * generated with the generator in capi/gen/am_families.py.
 */
#ifndef GASNETEX_H
#define GASNETEX_H

#include <stddef.h>
#include <stdint.h>
#include <gasnet_tools.h>

GASNETT_BEGIN_EXTERNC

/* ---- configuration ------------------------------------------------------ */
#define GASNET_SEQ 1
#undef GASNET_PAR
#undef GASNET_PARSYNC
#undef GASNET_SEGMENT_EVERYTHING
#undef GASNET_DEBUG
#undef GASNET_PSHM
#define GASNET_SEGMENT_FAST 1
#define GASNET_ALIGNED_SEGMENTS 0
#define GASNET_CONDUIT_OFI 1
#define GASNET_CONDUIT_NAME OFI
#define GASNET_CONDUIT_NAME_STR "OFI"
#define GASNET_CORE_NAME OFI
#define GASNET_CORE_NAME_STR "OFI"
#define GASNET_CORE_VERSION 0.1
#define GASNET_CORE_VERSION_STR "0.1"
#define GASNET_EXTENDED_NAME OFI
#define GASNET_EXTENDED_NAME_STR "OFI"
#define GASNET_CONFIG_STRING "RELEASE=gasnet-ofi-0.1,SPEC=1.8,CONDUIT=OFI,THREADMODEL=SEQ,SEGMENT=FAST,PTR=64bit,nodebug,notrace,nostats"
#define GASNET_RELEASE_VERSION_MAJOR 2021
#define GASNET_RELEASE_VERSION_MINOR 3
#define GASNET_RELEASE_VERSION_PATCH 0
#define GEX_SPEC_VERSION_MAJOR 0
#define GEX_SPEC_VERSION_MINOR 13
#define GASNET_SPEC_VERSION_MAJOR 1
#define GASNET_SPEC_VERSION_MINOR 8
#define GASNET_MAXNODES 262143
#define GASNET_MAXEPS 1
#define GASNET_HIDDEN_AM_CONCURRENCY_LEVEL 0
#define SIZEOF_GEX_RMA_VALUE_T 8

/* ---- types ----------------------------------------------------------------- */
typedef uint32_t gex_Rank_t;
typedef uint32_t gex_Flags_t;
typedef uint32_t gex_TI_t;
typedef uint32_t gex_EC_t;
typedef uint8_t gex_AM_Index_t;
typedef int32_t gex_AM_Arg_t;
typedef uint64_t gex_RMA_Value_t;
typedef void *gex_Addr_t;
typedef struct gasnetc_Client_s *gex_Client_t;
typedef struct gasnetc_EP_s *gex_EP_t;
typedef struct gasnetc_TM_s *gex_TM_t;
typedef struct gasnetc_Segment_s *gex_Segment_t;
typedef struct gasnetc_Token_s *gex_Token_t;
typedef struct gasnetc_Event_s *gex_Event_t;
typedef struct gasnetc_SrcDesc_s *gex_AM_SrcDesc_t;
/* Handlers are registered without casts: an unprototyped pointer (in C++
 * cast to gex_AM_Fn_t, as with GASNet). */
#ifdef __cplusplus
typedef void (*gex_AM_Fn_t)();
#else
typedef void (*gex_AM_Fn_t)();
#endif

typedef struct {
    gex_AM_Index_t gex_index;  /* 0 or in [GEX_AM_INDEX_BASE .. 255] */
    gex_AM_Fn_t gex_fnptr;     /* the handler */
    gex_Flags_t gex_flags;     /* one of SHORT/MEDIUM/LONG/MEDLONG | one of REQUEST/REPLY/REQREP */
    unsigned int gex_nargs;    /* 0 .. gex_AM_MaxArgs() */
    const void *gex_cdata;     /* available to the handler (GEX_TI_ENTRY) */
    const char *gex_name;      /* used in error messages */
} gex_AM_Entry_t;

typedef struct {
    gex_Rank_t gex_srcrank;
    gex_EP_t gex_ep;
    const gex_AM_Entry_t *gex_entry;
    int gex_is_req;
    int gex_is_long;
} gex_Token_Info_t;

typedef const struct {
    gex_Rank_t gex_jobrank;
} gex_RankInfo_t;

/* A handler-safe lock. */
typedef struct {
    volatile int gasnetc_held;
    int gasnetc_reserved;
} gex_HSL_t;
#define GEX_HSL_INITIALIZER { 0, 0 }

typedef struct {
    void *addr;
    uintptr_t size;
} gasnet_seginfo_t;

/* ---- constants ------------------------------------------------------------ */
#define GEX_CLIENT_INVALID ((gex_Client_t)0)
#define GEX_EP_INVALID ((gex_EP_t)0)
#define GEX_TM_INVALID ((gex_TM_t)0)
#define GEX_SEGMENT_INVALID ((gex_Segment_t)0)
#define GEX_RANK_INVALID ((gex_Rank_t)0xFFFFFFFFu)
#define GEX_AM_SRCDESC_NO_OP ((gex_AM_SrcDesc_t)0)
#define GEX_AM_INDEX_BASE 128

#define GEX_EVENT_INVALID ((gex_Event_t)0)
#define GEX_EVENT_NO_OP ((gex_Event_t)(uintptr_t)1)
#define GEX_EVENT_NOW ((gex_Event_t *)(uintptr_t)1)
#define GEX_EVENT_DEFER ((gex_Event_t *)(uintptr_t)2)
#define GEX_EVENT_GROUP ((gex_Event_t *)(uintptr_t)3)

#define GEX_FLAG_IMMEDIATE ((gex_Flags_t)0x1)
#define GEX_FLAG_AM_PREPARE_LEAST_CLIENT ((gex_Flags_t)0x2)
#define GEX_FLAG_AM_PREPARE_LEAST_ALLOC ((gex_Flags_t)0x4)
#define GEX_FLAG_USES_GASNET1 ((gex_Flags_t)0x8)
#define GEX_FLAG_AM_SHORT ((gex_Flags_t)0x100)
#define GEX_FLAG_AM_MEDIUM ((gex_Flags_t)0x200)
#define GEX_FLAG_AM_LONG ((gex_Flags_t)0x400)
#define GEX_FLAG_AM_MEDLONG ((gex_Flags_t)0x600)
#define GEX_FLAG_AM_REQUEST ((gex_Flags_t)0x800)
#define GEX_FLAG_AM_REPLY ((gex_Flags_t)0x1000)
#define GEX_FLAG_AM_REQREP ((gex_Flags_t)0x1800)

#define GEX_TI_SRCRANK ((gex_TI_t)0x1)
#define GEX_TI_EP ((gex_TI_t)0x2)
#define GEX_TI_ENTRY ((gex_TI_t)0x4)
#define GEX_TI_IS_REQ ((gex_TI_t)0x8)
#define GEX_TI_IS_LONG ((gex_TI_t)0x10)
#define GEX_TI_ALL ((gex_TI_t)0x1f)

#define GEX_EC_GET ((gex_EC_t)0x1)
#define GEX_EC_PUT ((gex_EC_t)0x2)
#define GEX_EC_AM ((gex_EC_t)0x4)
#define GEX_EC_LC ((gex_EC_t)0x8)
#define GEX_EC_RMW ((gex_EC_t)0x10)
#define GEX_EC_ALL ((gex_EC_t)0x1f)

#define GASNET_OK 0
#define GASNET_ERR_BASE 10000
#define GASNET_ERR_NOT_INIT 10001
#define GASNET_ERR_RESOURCE 10002
#define GASNET_ERR_BAD_ARG 10003
#define GASNET_ERR_NOT_READY 10004
#define GASNET_ERR_BARRIER_MISMATCH 10005

#define GASNET_WAIT_SPIN 0
#define GASNET_WAIT_BLOCK 1
#define GASNET_WAIT_SPINBLOCK 2

#define GASNET_BARRIERFLAG_ANONYMOUS 1
#define GASNET_BARRIERFLAG_UNNAMED 4

/* ---- start-up, queries, exit -------------------------------------------- */
extern int gex_Client_Init(gex_Client_t *client_p, gex_EP_t *ep_p, gex_TM_t *tm_p,
                           const char *clientName, int *argc, char ***argv, gex_Flags_t flags);
extern int gex_Segment_Attach(gex_Segment_t *segment_p, gex_TM_t tm, uintptr_t size);
extern int gex_EP_RegisterHandlers(gex_EP_t ep, gex_AM_Entry_t *table, size_t numentries);
extern gex_Rank_t gex_TM_QueryRank(gex_TM_t tm);
extern gex_Rank_t gex_TM_QuerySize(gex_TM_t tm);
extern gex_Rank_t gex_System_QueryJobRank(void);
extern gex_Rank_t gex_System_QueryJobSize(void);
extern void gex_System_QueryMyPosition(gex_Rank_t *nbrhd_set_size, gex_Rank_t *nbrhd_set_rank,
                                       gex_Rank_t *host_set_size, gex_Rank_t *host_set_rank);
extern void gex_System_QueryHostInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                                     gex_Rank_t *my_info_index_p);
extern gex_Event_t gex_EP_QueryBoundSegmentNB(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                                              void **localaddr_p, uintptr_t *size_p,
                                              gex_Flags_t flags);
GASNETT_NORETURN extern void gasnet_exit(int exitcode) GASNETT_NORETURNP(gasnet_exit);
extern const char *gasnet_ErrorName(int errval);
extern const char *gasnet_ErrorDesc(int errval);
extern int gasnet_set_waitmode(int wait_mode);

/* ---- Active Messages ------------------------------------------------------ */
extern unsigned int gex_AM_MaxArgs(void);
extern size_t gex_AM_LUBRequestMedium(void);
extern size_t gex_AM_LUBReplyMedium(void);
extern size_t gex_AM_LUBRequestLong(void);
extern size_t gex_AM_LUBReplyLong(void);
extern size_t gex_AM_MaxRequestMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                      gex_Flags_t flags, unsigned int numargs);
extern size_t gex_AM_MaxReplyMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                    gex_Flags_t flags, unsigned int numargs);
extern size_t gex_AM_MaxRequestLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                    gex_Flags_t flags, unsigned int numargs);
extern size_t gex_AM_MaxReplyLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                  gex_Flags_t flags, unsigned int numargs);
extern gex_TI_t gex_Token_Info(gex_Token_t token, gex_Token_Info_t *info, gex_TI_t mask);
extern int gasnet_AMPoll(void);
#define GASNET_BLOCKUNTIL(cond) do { while (!(cond)) gasnetc_AMPoll_idle(); } while (0)

extern void gex_HSL_Init(gex_HSL_t *hsl);
extern void gex_HSL_Destroy(gex_HSL_t *hsl);
extern void gex_HSL_Lock(gex_HSL_t *hsl);
extern void gex_HSL_Unlock(gex_HSL_t *hsl);
extern int gex_HSL_Trylock(gex_HSL_t *hsl);

/* Negotiated-payload AMs. */
extern gex_AM_SrcDesc_t gex_AM_PrepareRequestMedium(gex_TM_t tm, gex_Rank_t rank, const void *client_buf,
                                                    size_t least_payload, size_t most_payload,
                                                    gex_Event_t *lc_opt, gex_Flags_t flags,
                                                    unsigned int numargs);
extern gex_AM_SrcDesc_t gex_AM_PrepareReplyMedium(gex_Token_t token, const void *client_buf,
                                                  size_t least_payload, size_t most_payload,
                                                  gex_Event_t *lc_opt, gex_Flags_t flags,
                                                  unsigned int numargs);
extern gex_AM_SrcDesc_t gex_AM_PrepareRequestLong(gex_TM_t tm, gex_Rank_t rank, const void *client_buf,
                                                  size_t least_payload, size_t most_payload,
                                                  void *dest_addr, gex_Event_t *lc_opt,
                                                  gex_Flags_t flags, unsigned int numargs);
extern gex_AM_SrcDesc_t gex_AM_PrepareReplyLong(gex_Token_t token, const void *client_buf,
                                                size_t least_payload, size_t most_payload,
                                                void *dest_addr, gex_Event_t *lc_opt,
                                                gex_Flags_t flags, unsigned int numargs);
extern void *gex_AM_SrcDescAddr(gex_AM_SrcDesc_t sd);
extern size_t gex_AM_SrcDescSize(gex_AM_SrcDesc_t sd);

/* The entry points the AM families call (not for direct use). */
extern int gasnetc_AM_RequestShort(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                                   gex_Flags_t flags, unsigned int nargs, const gex_AM_Arg_t *args);
extern int gasnetc_AM_ReplyShort(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags,
                                 unsigned int nargs, const gex_AM_Arg_t *args);
extern int gasnetc_AM_RequestMedium(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                                    const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                                    gex_Flags_t flags, unsigned int nargs, const gex_AM_Arg_t *args);
extern int gasnetc_AM_ReplyMedium(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr,
                                  size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags,
                                  unsigned int nargs, const gex_AM_Arg_t *args);
extern int gasnetc_AM_RequestLong(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                                  const void *source_addr, size_t nbytes, void *dest_addr,
                                  gex_Event_t *lc_opt, gex_Flags_t flags, unsigned int nargs,
                                  const gex_AM_Arg_t *args);
extern int gasnetc_AM_ReplyLong(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr,
                                size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags,
                                unsigned int nargs, const gex_AM_Arg_t *args);
/* kind: 0 request Medium, 1 reply Medium, 2 request Long, 3 reply Long */
extern void gasnetc_AM_Commit(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes,
                              void *dest_addr, int kind, unsigned int nargs, const gex_AM_Arg_t *args);
extern void gasnetc_AMPoll_idle(void);

#define GASNETC_AT40(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, \
                     _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32,   \
                     _33, _34, _35, _36, _37, _38, _39, X, ...) X

