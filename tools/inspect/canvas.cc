#include "tools/inspect/canvas.h"

#include <png.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "core/util/error.h"

namespace vld::inspect {

Canvas::Canvas(uint32_t width_px, uint32_t height_px)
    : width_px_(width_px), height_px_(height_px), rgb_(size_t{width_px} * height_px * 3, 255) {}

void Canvas::fill(int64_t x, int64_t y, int64_t w, int64_t h, Rgb c) {
  for (int64_t yy = std::max<int64_t>(y, 0); yy < std::min<int64_t>(y + h, height_px_); ++yy)
    for (int64_t xx = std::max<int64_t>(x, 0); xx < std::min<int64_t>(x + w, width_px_); ++xx) {
      uint8_t* p = rgb_.data() + (size_t(yy) * width_px_ + size_t(xx)) * 3;
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }
}

void Canvas::frame(int64_t x, int64_t y, int64_t w, int64_t h, int64_t t, Rgb c) {
  fill(x - t, y - t, w + 2 * t, t, c);
  fill(x - t, y + h, w + 2 * t, t, c);
  fill(x - t, y, t, h, c);
  fill(x + w, y, t, h, c);
}

void Canvas::triangle_down(int64_t x, int64_t y, int64_t size, Rgb c) {
  for (int64_t i = 0; i < size; ++i) fill(x - (size - 1 - i), y + i, 2 * (size - 1 - i) + 1, 1, c);
}

void Canvas::triangle_right(int64_t x, int64_t y, int64_t size, Rgb c) {
  for (int64_t i = 0; i < size; ++i) fill(x + i, y - (size - 1 - i), 1, 2 * (size - 1 - i) + 1, c);
}

namespace {

// Encodes the canvas as an 8-bit RGB PNG into file: nullptr, or what
// failed. (The project's convention outside exceptions is a why that is
// empty when all is well; libpng reports errors by longjmp, so nothing here
// may have a destructor, and the why is a static string.)
const char* encode_png(FILE* file, const Canvas& canvas) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) return "libpng could not start";
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return "libpng failed to encode";
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, canvas.width(), canvas.height(), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (uint32_t y = 0; y < canvas.height(); ++y)
    png_write_row(png, const_cast<png_bytep>(canvas.row(y)));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return nullptr;
}

}  // namespace

void write_png(const std::string& path, const Canvas& canvas) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) {
    const int err = errno;
    throw Error("--layout " + path + ": cannot create it (" + std::strerror(err) +
                    "); give a writable path in an existing directory",
                err);
  }
  const char* why = encode_png(file, canvas);
  const bool ok = why == nullptr;
  const bool closed = std::fclose(file) == 0;
  if (!ok || !closed) {
    const int err = ok ? errno : EIO;
    ::unlink(path.c_str());
    throw Error("--layout " + path + ": " + (ok ? std::string(std::strerror(err)) : why) +
                    "; nothing was written",
                err);
  }
}

}  // namespace vld::inspect
