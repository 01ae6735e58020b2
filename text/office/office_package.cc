#include "text/office/office_package.h"

#include <utility>

namespace mtserve {

struct OfficePackage::State {
  std::vector<std::string> names;
};

OfficePackage::OfficePackage(std::unique_ptr<State> state) : state_(std::move(state)) {}
OfficePackage::OfficePackage(OfficePackage&&) noexcept = default;
OfficePackage& OfficePackage::operator=(OfficePackage&&) noexcept = default;
OfficePackage::~OfficePackage() = default;

absl::StatusOr<OfficePackage> OfficePackage::Open(std::string, const PackageLimits&) {
  return absl::UnimplementedError("office documents are not translated yet");
}

const std::vector<std::string>& OfficePackage::names() const { return state_->names; }
bool OfficePackage::Has(absl::string_view) const { return false; }
absl::StatusOr<std::string> OfficePackage::Read(absl::string_view) const {
  return absl::UnimplementedError("office documents are not translated yet");
}
std::string OfficePackage::Write(const absl::flat_hash_map<std::string, std::string>&) const {
  return "";
}

}  // namespace mtserve
