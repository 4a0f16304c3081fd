// fmt's out-of-line half, compiled once into the static library pw_fmt
// (CMakeLists.txt), rather than into every translation unit as the
// header-only form does (FMT_HEADER_ONLY compiles <fmt/format-inl.h>
// everywhere: about 4 s of GCC's 16 s for src/query/explain.cc), and
// rather than through Debian's shared libfmt, whose loading costs every
// start (docs/performance.md, "explain of one query").
//
// <fmt/format-inl.h> defines the non-template functions <fmt/format.h>
// declares; the templates it declares extern, or only declares, are
// instantiated here for the types the project formats.

#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;

}  // namespace detail
FMT_END_NAMESPACE
