// A Beast body type for requests: the body as a std::string that grows only as its bytes arrive.
// Beast's own string_body reserves the announced Content-Length at once, so a client announcing
// 4 MiB and then sending a byte a second would make each of its connections hold 4 MiB: what a
// body holds must follow what was received for the transport's memory bound to mean anything.
#ifndef MTSERVE_FRONTENDS_HTTP_GROWING_STRING_BODY_H_
#define MTSERVE_FRONTENDS_HTTP_GROWING_STRING_BODY_H_

#include <cstdint>
#include <string>

#include "boost/asio/buffer.hpp"
#include "boost/beast/core/buffers_range.hpp"
#include "boost/beast/core/error.hpp"
#include "boost/beast/http/error.hpp"
#include "boost/beast/http/message.hpp"
#include "boost/optional.hpp"

namespace mtserve {

struct GrowingStringBody {
  using value_type = std::string;

  static std::uint64_t size(const value_type& body) { return body.size(); }

  // Meets Beast's BodyReader: what the parser appends the body's bytes to.
  class reader {
   public:
    template <bool kIsRequest, class Fields>
    reader(boost::beast::http::header<kIsRequest, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>&, boost::beast::error_code& error) {
      error = {};
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& error) {
      std::size_t added = 0;
      for (const auto buffer : boost::beast::buffers_range_ref(buffers)) {
        body_.append(static_cast<const char*>(buffer.data()), buffer.size());
        added += buffer.size();
      }
      error = {};
      return added;
    }

    void finish(boost::beast::error_code& error) { error = {}; }

   private:
    value_type& body_;
  };
};

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_GROWING_STRING_BODY_H_
