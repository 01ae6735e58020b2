// Early-return helpers for absl::Status and absl::StatusOr, in the style of Abseil's internal
// macros.
#ifndef MTSERVE_BASE_STATUS_MACROS_H_
#define MTSERVE_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MT_STATUS_CONCAT_INNER_(a, b) a##b
#define MT_STATUS_CONCAT_(a, b) MT_STATUS_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define MT_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status mt_status_ = (expr);      \
    if (!mt_status_.ok()) return mt_status_; \
  } while (0)

// `lhs = value of expr`, or returns its status from the enclosing function.
#define MT_ASSIGN_OR_RETURN(lhs, expr) \
  MT_ASSIGN_OR_RETURN_IMPL_(MT_STATUS_CONCAT_(mt_statusor_, __LINE__), lhs, expr)
#define MT_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return statusor.status();        \
  lhs = std::move(statusor).value()

#endif  // MTSERVE_BASE_STATUS_MACROS_H_
