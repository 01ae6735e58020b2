// The native API's glossary messages (mtserve.v1: CreateGlossaryRequest, GlossaryInfo, Glossary)
// to and from serving/glossaries.h's, for gRPC and HTTP (through the JSON mapping) alike, and the
// bounds on a CreateGlossaryRequest's values, checked before it is built.
#ifndef MTSERVE_FRONTENDS_PROTO_GLOSSARY_MAPPING_H_
#define MTSERVE_FRONTENDS_PROTO_GLOSSARY_MAPPING_H_

#include <vector>

#include "base/json_file.h"
#include "mtserve/v1/translation.pb.h"
#include "serving/glossaries.h"

namespace mtserve {

// The glossary a CreateGlossaryRequest asks for (its entries moved out of `request`).
Glossary ToGlossary(v1::CreateGlossaryRequest& request);

// As messages; creation_time in RFC 3339 (UTC).
v1::GlossaryInfo ToGlossaryInfoProto(const GlossaryInfo& info);
v1::Glossary ToGlossaryProto(const Glossary& glossary);
v1::ListGlossariesResponse ToListGlossariesResponse(const std::vector<GlossaryInfo>& infos);

// What a CreateGlossaryRequest within `limits` may hold: each entry an object, its source, its
// targets array and max_targets targets, for max_entries entries, plus the request's own fields.
ValueBounds GlossaryValueBounds(const GlossaryLimits& limits);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_PROTO_GLOSSARY_MAPPING_H_
