// tc_tiles.h: the warp tiling of the tensor-core rungs (05-08), sweepable with -D. A block covers
// WARPS_M * WARP_M output channels per chunk (kBM) and TILE_T = WARPS_N * WARP_N time steps per tile;
// each warp a WARP_M x WARP_N tile of m16n8k8 MMAs (WARP_M % 16 == 0, WARP_N % 8 == 0).
#pragma once
#ifndef WARPS_M
#define WARPS_M 4
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef WARP_M
#define WARP_M 32
#endif
#ifndef WARP_N
#define WARP_N 32
#endif
#ifndef TILE_T
#define TILE_T (WARPS_N * WARP_N)
#endif
static_assert(WARP_M % 16 == 0 && WARP_N % 8 == 0, "warp tile must be a multiple of the 16x8 mma tile");
static_assert(TILE_T == WARPS_N * WARP_N, "TILE_T must equal WARPS_N * WARP_N");
static_assert(WARPS_M * WARPS_N * 32 <= 1024, "too many threads per block");

namespace {
constexpr int kBM = WARPS_M * WARP_M;
}  // namespace
