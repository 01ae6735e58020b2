// Zip archives written and read byte by byte for tests of what reads and writes them: local
// headers, the central directory and its end record laid out as the zip format (APPNOTE 4.3)
// says, with every field the test's to choose, so that hostile archives (sizes that lie, names
// that escape, flags set by hand) can be made that no zip library would write, and an archive's
// entries seen as its bytes hold them, without a zip library. Also raw deflate (zlib) of a string
// or of a long run of zeros streamed without holding it.
#ifndef MTSERVE_TESTS_TEST_LIB_ZIP_BYTES_H_
#define MTSERVE_TESTS_TEST_LIB_ZIP_BYTES_H_

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace mtserve::testing {

// One entry as written: `data` is what the archive holds (already deflated for method 8), the
// other fields are written as given, in the local header and the central directory alike unless
// `central_size` says otherwise.
struct RawZipEntry {
  std::string name;
  std::string data;
  uint16_t method = 0;  // 0 stored, 8 deflated, anything else as given.
  uint32_t crc = 0;
  uint32_t size = 0;  // Declared uncompressed size.
  uint16_t flags = 0;
  std::string extra;          // Extra field, in both headers.
  int64_t central_size = -1;  // If >= 0, the central directory's uncompressed size instead.
};

inline void PutLe(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

inline uint32_t Crc32(const std::string& bytes) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

// `bytes` as raw deflate (no zlib or gzip wrapper), as zip entries hold it.
inline std::string RawDeflate(const std::string& bytes) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    std::abort();
  }
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// `count` zero bytes as raw deflate, streamed (never held uncompressed); their CRC in `crc`.
inline std::string RawDeflateZeros(uint64_t count, uint32_t* crc) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    std::abort();
  }
  const std::string zeros(1 << 20, '\0');
  std::string out, chunk(1 << 16, '\0');
  uLong sum = crc32(0, nullptr, 0);
  uint64_t left = count;
  int flush = Z_NO_FLUSH;
  do {
    if (stream.avail_in == 0 && flush == Z_NO_FLUSH) {
      const uint64_t n = left < zeros.size() ? left : zeros.size();
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
      stream.avail_in = static_cast<uInt>(n);
      sum = crc32(sum, reinterpret_cast<const Bytef*>(zeros.data()), static_cast<uInt>(n));
      left -= n;
      if (left == 0) flush = Z_FINISH;
    }
    stream.next_out = reinterpret_cast<Bytef*>(chunk.data());
    stream.avail_out = static_cast<uInt>(chunk.size());
    const int result = deflate(&stream, flush);
    if (result == Z_STREAM_ERROR) std::abort();
    out.append(chunk.data(), chunk.size() - stream.avail_out);
    if (result == Z_STREAM_END) break;
  } while (true);
  deflateEnd(&stream);
  *crc = static_cast<uint32_t>(sum);
  return out;
}

inline RawZipEntry StoredEntry(std::string name, const std::string& content) {
  RawZipEntry entry;
  entry.name = std::move(name);
  entry.data = content;
  entry.crc = Crc32(content);
  entry.size = static_cast<uint32_t>(content.size());
  return entry;
}

inline RawZipEntry DeflatedEntry(std::string name, const std::string& content) {
  RawZipEntry entry = StoredEntry(std::move(name), content);
  entry.data = RawDeflate(content);
  entry.method = 8;
  return entry;
}

// The archive of `entries`, after `prefix` (bytes before the first entry, as self-extracting
// archives have; offsets count them).
inline std::string RawZip(const std::vector<RawZipEntry>& entries, const std::string& prefix = "") {
  std::string out = prefix, central;
  for (const RawZipEntry& entry : entries) {
    const uint64_t offset = out.size();
    PutLe(out, 0x04034b50, 4);
    PutLe(out, 20, 2);  // Version needed.
    PutLe(out, entry.flags, 2);
    PutLe(out, entry.method, 2);
    PutLe(out, 0, 2);     // Time.
    PutLe(out, 0x21, 2);  // Date: 1980-01-01.
    PutLe(out, entry.crc, 4);
    PutLe(out, entry.data.size(), 4);
    PutLe(out, entry.size, 4);
    PutLe(out, entry.name.size(), 2);
    PutLe(out, entry.extra.size(), 2);
    out += entry.name;
    out += entry.extra;
    out += entry.data;

    PutLe(central, 0x02014b50, 4);
    PutLe(central, 20, 2);  // Version made by.
    PutLe(central, 20, 2);  // Version needed.
    PutLe(central, entry.flags, 2);
    PutLe(central, entry.method, 2);
    PutLe(central, 0, 2);
    PutLe(central, 0x21, 2);
    PutLe(central, entry.crc, 4);
    PutLe(central, entry.data.size(), 4);
    PutLe(central, entry.central_size >= 0 ? static_cast<uint64_t>(entry.central_size) : entry.size,
          4);
    PutLe(central, entry.name.size(), 2);
    PutLe(central, entry.extra.size(), 2);
    PutLe(central, 0, 2);  // Comment length.
    PutLe(central, 0, 2);  // Disk.
    PutLe(central, 0, 2);  // Internal attributes.
    PutLe(central, 0, 4);  // External attributes.
    PutLe(central, offset, 4);
    central += entry.name;
    central += entry.extra;
  }
  const uint64_t central_offset = out.size();
  out += central;
  PutLe(out, 0x06054b50, 4);
  PutLe(out, 0, 2);
  PutLe(out, 0, 2);
  PutLe(out, entries.size(), 2);
  PutLe(out, entries.size(), 2);
  PutLe(out, central.size(), 4);
  PutLe(out, central_offset, 4);
  PutLe(out, 0, 2);  // Comment length.
  return out;
}

// One entry as an archive's bytes hold it: its central directory record's fields, and its local
// header's extra field and data (the bytes after the local header, compressed size long).
struct ZipRecord {
  std::string name;
  uint16_t flags, method, time, date;
  uint32_t crc;
  uint64_t comp_size, size;
  std::string central_extra, local_extra, data;
  bool operator==(const ZipRecord&) const = default;
};

inline uint64_t GetLe(const std::string& bytes, size_t at, int n) {
  uint64_t value = 0;
  for (int i = n - 1; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes.at(at + i));
  return value;
}

// The entries of `bytes` (no zip64, no comment after the end record), in central directory
// order; throws std::out_of_range on bytes that are not laid out so.
inline std::vector<ZipRecord> ReadZipRecords(const std::string& bytes) {
  const size_t end = bytes.size() - 22;
  if (GetLe(bytes, end, 4) != 0x06054b50) throw std::out_of_range("no end record");
  const uint64_t count = GetLe(bytes, end + 10, 2);
  size_t at = GetLe(bytes, end + 16, 4);
  std::vector<ZipRecord> records;
  for (uint64_t i = 0; i < count; ++i) {
    if (GetLe(bytes, at, 4) != 0x02014b50) throw std::out_of_range("no central record");
    ZipRecord record;
    record.flags = GetLe(bytes, at + 8, 2);
    record.method = GetLe(bytes, at + 10, 2);
    record.time = GetLe(bytes, at + 12, 2);
    record.date = GetLe(bytes, at + 14, 2);
    record.crc = GetLe(bytes, at + 16, 4);
    record.comp_size = GetLe(bytes, at + 20, 4);
    record.size = GetLe(bytes, at + 24, 4);
    const size_t name_length = GetLe(bytes, at + 28, 2), extra_length = GetLe(bytes, at + 30, 2);
    const size_t comment_length = GetLe(bytes, at + 32, 2), local = GetLe(bytes, at + 42, 4);
    record.name = bytes.substr(at + 46, name_length);
    record.central_extra = bytes.substr(at + 46 + name_length, extra_length);
    if (GetLe(bytes, local, 4) != 0x04034b50) throw std::out_of_range("no local header");
    const size_t local_name = GetLe(bytes, local + 26, 2),
                 local_extra = GetLe(bytes, local + 28, 2);
    record.local_extra = bytes.substr(local + 30 + local_name, local_extra);
    record.data = bytes.substr(local + 30 + local_name + local_extra, record.comp_size);
    records.push_back(std::move(record));
    at += 46 + name_length + extra_length + comment_length;
  }
  return records;
}

}  // namespace mtserve::testing

#endif  // MTSERVE_TESTS_TEST_LIB_ZIP_BYTES_H_
