// The native API's glossary messages (glossary_mapping.h).
#include "frontends/proto/glossary_mapping.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace mtserve {

Glossary ToGlossary(v1::CreateGlossaryRequest& request) {
  Glossary glossary;
  glossary.info.name = request.name();
  glossary.info.source_language = request.source_language();
  glossary.info.target_language = request.target_language();
  glossary.entries.reserve(request.entries_size());
  for (v1::GlossaryEntry& entry : *request.mutable_entries()) {
    GlossaryEntry& added = glossary.entries.emplace_back();
    added.source = std::move(*entry.mutable_source());
    for (std::string& target : *entry.mutable_targets()) added.targets.push_back(std::move(target));
  }
  return glossary;
}

v1::GlossaryInfo ToGlossaryInfoProto(const GlossaryInfo& info) {
  v1::GlossaryInfo proto;
  proto.set_id(info.id);
  proto.set_name(info.name);
  proto.set_source_language(info.source_language);
  proto.set_target_language(info.target_language);
  proto.set_entry_count(static_cast<uint64_t>(info.entry_count));
  proto.set_creation_time(
      absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", info.created, absl::UTCTimeZone()));
  proto.set_read_only(info.read_only);
  return proto;
}

v1::Glossary ToGlossaryProto(const Glossary& glossary) {
  v1::Glossary proto;
  *proto.mutable_info() = ToGlossaryInfoProto(glossary.info);
  for (const GlossaryEntry& entry : glossary.entries) {
    v1::GlossaryEntry* added = proto.add_entries();
    added->set_source(entry.source);
    for (const std::string& target : entry.targets) added->add_targets(target);
  }
  return proto;
}

v1::ListGlossariesResponse ToListGlossariesResponse(const std::vector<GlossaryInfo>& infos) {
  v1::ListGlossariesResponse response;
  for (const GlossaryInfo& info : infos) *response.add_glossaries() = ToGlossaryInfoProto(info);
  return response;
}

ValueBounds GlossaryValueBounds(const GlossaryLimits& limits) {
  constexpr int kOtherValues = 64;
  const int64_t per_entry = 3 + int64_t{limits.terms.max_targets};
  return {.max_depth = kMaxJsonDepth,
          .max_values = int64_t{limits.max_entries} * per_entry + kOtherValues,
          .values_limit = absl::StrCat("the server's --max_glossary_entries (", limits.max_entries,
                                       ") entries of ", limits.terms.max_targets,
                                       " targets at most, plus ", kOtherValues)};
}

}  // namespace mtserve
