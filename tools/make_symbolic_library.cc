// make_symbolic_library IN OUT SONAME: writes a copy of the ELF64 shared library IN to OUT with
// DF_SYMBOLIC set in its dynamic section and its soname replaced by SONAME (no longer than the
// old one). Build-time only: it makes the private libsentencepiece copy that
// libmtserve_sentencepiece.so links (model/sentencepiece_module.h says why).
//
// DF_SYMBOLIC is what `ld -Bsymbolic` records: the dynamic loader resolves the library's own
// references in the library first, then in the global scope. The new soname keeps the copy from
// being mistaken for the system library (LD_LIBRARY_PATH, an already loaded copy).
#include <elf.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "make_symbolic_library: %s\n", message.c_str());
  std::exit(1);
}

// The file offset of virtual address `address`, from the PT_LOAD segment that maps it.
size_t FileOffsetOf(const std::vector<char>& elf, const Elf64_Ehdr& header, uint64_t address) {
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, &elf[header.e_phoff + i * sizeof(segment)], sizeof(segment));
    if (segment.p_type == PT_LOAD && address >= segment.p_vaddr &&
        address < segment.p_vaddr + segment.p_filesz) {
      return address - segment.p_vaddr + segment.p_offset;
    }
  }
  Fail("address " + std::to_string(address) + " is in no loaded segment");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) Fail("usage: make_symbolic_library IN OUT SONAME");
  const std::string in_path = argv[1], out_path = argv[2], soname = argv[3];
  std::ifstream in(in_path, std::ios::binary);
  std::vector<char> elf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) Fail("cannot read " + in_path);

  Elf64_Ehdr header;
  if (elf.size() < sizeof(header)) Fail(in_path + " is not an ELF file");
  std::memcpy(&header, elf.data(), sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_type != ET_DYN) {
    Fail(in_path + " is not a little-endian ELF64 shared library");
  }
  if (header.e_phoff + header.e_phnum * sizeof(Elf64_Phdr) > elf.size()) {
    Fail(in_path + " is truncated");
  }

  size_t dynamic_offset = 0, dynamic_count = 0;
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, &elf[header.e_phoff + i * sizeof(segment)], sizeof(segment));
    if (segment.p_type == PT_DYNAMIC) {
      dynamic_offset = segment.p_offset;
      dynamic_count = segment.p_filesz / sizeof(Elf64_Dyn);
    }
  }
  if (dynamic_count == 0 || dynamic_offset + dynamic_count * sizeof(Elf64_Dyn) > elf.size()) {
    Fail(in_path + " has no dynamic section");
  }

  size_t flags_entry = 0, soname_entry = 0;
  uint64_t string_table = 0;
  for (size_t i = 0; i < dynamic_count; ++i) {
    Elf64_Dyn entry;
    const size_t at = dynamic_offset + i * sizeof(entry);
    std::memcpy(&entry, &elf[at], sizeof(entry));
    if (entry.d_tag == DT_NULL) break;
    if (entry.d_tag == DT_FLAGS) flags_entry = at;
    if (entry.d_tag == DT_SONAME) soname_entry = at;
    if (entry.d_tag == DT_STRTAB) string_table = entry.d_un.d_ptr;
  }
  // Adding an entry would move the sections after it; every library linked with -z now (as
  // Debian links them) has DT_FLAGS already.
  if (flags_entry == 0) Fail(in_path + " has no DT_FLAGS entry to set DF_SYMBOLIC in");
  if (soname_entry == 0 || string_table == 0) Fail(in_path + " has no soname");

  Elf64_Dyn flags;
  std::memcpy(&flags, &elf[flags_entry], sizeof(flags));
  flags.d_un.d_val |= DF_SYMBOLIC;
  std::memcpy(&elf[flags_entry], &flags, sizeof(flags));

  Elf64_Dyn soname_ref;
  std::memcpy(&soname_ref, &elf[soname_entry], sizeof(soname_ref));
  const size_t soname_at = FileOffsetOf(elf, header, string_table) + soname_ref.d_un.d_val;
  if (soname_at >= elf.size()) Fail(in_path + ": the soname is outside the file");
  const size_t old_length = strnlen(&elf[soname_at], elf.size() - soname_at);
  if (soname.size() > old_length) {
    Fail("soname " + soname + " is longer than " + std::string(&elf[soname_at], old_length));
  }
  // The old name's bytes are overwritten and its tail zeroed: the string table keeps its size.
  std::memset(&elf[soname_at], 0, old_length);
  std::memcpy(&elf[soname_at], soname.data(), soname.size());

  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out.write(elf.data(), static_cast<std::streamsize>(elf.size()));
  out.close();
  if (!out) Fail("cannot write " + out_path);
  return 0;
}
