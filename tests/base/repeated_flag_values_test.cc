// A repeatable flag's values (base/repeated_flag_values.h): every occurrence, in order, commas
// splitting, nothing after "--" and no flag that only starts with the name.
#include "base/repeated_flag_values.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtserve {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Values(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return RepeatedFlagValues(static_cast<int>(argv.size()), argv.data(), "model");
}

TEST(RepeatedFlagValuesTest, EveryOccurrenceInOrder) {
  EXPECT_THAT(Values({"mtserve", "--model=a=/x", "--listen=:1", "--model", "b=/y", "-model=/z",
                      "--model=c=/u,d=/v"}),
              ElementsAre("a=/x", "b=/y", "/z", "c=/u", "d=/v"));
  EXPECT_THAT(Values({"mtserve", "--models=a=/x", "--", "--model=b=/y"}), ElementsAre());
}

}  // namespace
}  // namespace mtserve
