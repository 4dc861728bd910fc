#include "pinned_upload.h"

#include <ATen/core/CachingHostAllocator.h>
#include <c10/cuda/CUDAException.h>

#include <mutex>
#include <utility>
#include <vector>

namespace torch_grouped {
namespace {

// Keeps pinned staging buffers alive while a CUDA graph that copies from them may replay.
void keep_for_graph(at::DataPtr host) {
  static std::mutex lock;
  static std::vector<at::DataPtr> kept;
  std::lock_guard<std::mutex> guard(lock);
  kept.push_back(std::move(host));
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

at::DataPtr pinned_block(size_t bytes) { return at::getHostAllocator(at::kCUDA)->allocate(bytes); }

void upload_pinned(at::DataPtr host, void* dst, size_t bytes, const c10::cuda::CUDAStream& stream) {
  C10_CUDA_CHECK(cudaMemcpyAsync(dst, host.get(), bytes, cudaMemcpyHostToDevice, stream.stream()));
  at::getHostAllocator(at::kCUDA)->record_event(host.get(), host.get_context(), stream.unwrap());
  if (capturing(stream.stream())) keep_for_graph(std::move(host));
}

}  // namespace torch_grouped
