// The server's directory of read-only glossary files (--glossary_dir), which serving/glossaries.h
// serves to every caller: each file `NAME.SRC-TGT.tsv` or `NAME.SRC-TGT.csv` (DeepL's entry
// formats, text/glossary_file.h) is one glossary of id `NAME.SRC-TGT` (the file's name without
// its extension: a stored glossary's id has no dot, so the two never meet), named NAME, from SRC
// into TGT, created when the file was last modified. Files of other extensions and hidden ones
// (".x", and Kubernetes' "..data" of a mounted ConfigMap) are not glossaries; a .tsv or .csv file
// whose name is not of that form is an error naming it. No threads, no state.
#ifndef MTSERVE_SERVING_GLOSSARY_FILES_H_
#define MTSERVE_SERVING_GLOSSARY_FILES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "serving/glossaries.h"
#include "serving/state/glossary_store.h"
#include "text/glossary_file.h"

namespace mtserve {

struct GlossaryFileName {
  std::string id;  // NAME.SRC-TGT
  std::string name;
  std::string source_language;
  std::string target_language;
  GlossaryFileFormat format = GlossaryFileFormat::kTsv;
};

// What `file_name` (no directory) says: nullopt when it is no glossary file (not .tsv or .csv,
// or hidden); InvalidArgument naming it when it is one whose name is not NAME.SRC-TGT (NAME not
// empty; SRC and TGT language tags of letters, digits and '_').
absl::StatusOr<std::optional<GlossaryFileName>> ParseGlossaryFileName(absl::string_view file_name);

// The paths of the glossary files in `dir`, sorted; FailedPrecondition naming `dir` if it cannot
// be listed, InvalidArgument naming a file of a bad name.
absl::StatusOr<std::vector<std::string>> ListGlossaryFiles(const std::string& dir);

// The read-only glossary of the file at `path` (one ListGlossaryFiles gave), whose bytes are
// `bytes`, modified at `modified`: its entries within `limits` (the file's language columns, if
// any, its name's languages) and ValidateTerminology's rules. InvalidArgument naming the path
// (and the line, or the entry).
absl::StatusOr<Glossary> ReadGlossaryFile(const std::string& path, absl::string_view bytes,
                                          absl::Time modified, const GlossaryLimits& limits);

}  // namespace mtserve

#endif  // MTSERVE_SERVING_GLOSSARY_FILES_H_
