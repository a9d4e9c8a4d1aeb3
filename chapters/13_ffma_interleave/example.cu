// The smallest kernel with a dependent FFMA, for tests/host_chapter13.cpp: the build compiles it to
// a cubin (chapters/CMakeLists.txt), and the test reads its control bits. y = a * x + y.
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] = fmaf(a, x[i], y[i]);
}
