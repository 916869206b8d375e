/* Compiled by bootstrap/build.rs against the installed pmix.h: every
 * assertion states a fact that the hand-written declarations in pmix/ffi.rs
 * rely on. Nothing here is linked into the crate. */
#include <pmix.h>
#include <stddef.h>

_Static_assert(sizeof(pmix_status_t) == 4, "pmix_status_t");
_Static_assert(sizeof(pmix_rank_t) == 4, "pmix_rank_t");
_Static_assert(sizeof(pmix_scope_t) == 1, "pmix_scope_t");
_Static_assert(sizeof(pmix_data_type_t) == 2, "pmix_data_type_t");
_Static_assert(PMIX_MAX_NSLEN == 255 && PMIX_MAX_KEYLEN == 511, "name lengths");
_Static_assert(sizeof(pmix_proc_t) == 260 && offsetof(pmix_proc_t, rank) == 256, "pmix_proc_t");
_Static_assert(sizeof(pmix_value_t) == 32 && _Alignof(pmix_value_t) == 8, "pmix_value_t");
_Static_assert(offsetof(pmix_value_t, type) == 0 && offsetof(pmix_value_t, data) == 8, "pmix_value_t fields");
_Static_assert(offsetof(pmix_value_t, data.bo.bytes) == 8 && offsetof(pmix_value_t, data.bo.size) == 16, "byte object");
_Static_assert(offsetof(pmix_value_t, data.string) == 8 && offsetof(pmix_value_t, data.uint32) == 8, "scalars");
_Static_assert(offsetof(pmix_value_t, data.rank) == 8 && offsetof(pmix_value_t, data.flag) == 8, "scalars");
_Static_assert(sizeof(pmix_info_t) == 552 && offsetof(pmix_info_t, flags) == 512 && offsetof(pmix_info_t, value) == 520, "pmix_info_t");
_Static_assert(PMIX_SUCCESS == 0 && PMIX_ERR_NOT_FOUND == -46, "status codes");
_Static_assert(PMIX_BOOL == 1 && PMIX_STRING == 3 && PMIX_UINT32 == 14 && PMIX_BYTE_OBJECT == 27 && PMIX_PROC_RANK == 40, "data types");
_Static_assert(PMIX_GLOBAL == 3, "scopes");
_Static_assert(PMIX_RANK_WILDCARD == 4294967294u, "wildcard rank");
