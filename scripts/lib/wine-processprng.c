// A stand-in bcryptprimitives.dll for running the win32-x64 addon under
// Wine 8.0 (Debian 12), built by scripts/lib/wine.js with zig into the
// project cache and placed next to the addon of a test install only. Never
// shipped: Windows itself has ProcessPrng since Windows 10.
//
// Rust's std (1.78 and later) imports ProcessPrng from bcryptprimitives.dll
// for its random seeds (HashMap keys); Wine's bcryptprimitives.dll gained it
// in Wine 8.13 (wine-mirror/wine 83d4075202ea), so under 8.0 the addon does
// not load. This one forwards to BCryptGenRandom, which Wine 8.0 has.

#include <windows.h>
#include <bcrypt.h>

// Documented to always return TRUE: a caller has no failure path.
// https://learn.microsoft.com/en-us/windows/win32/seccng/processprng
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
    if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG))) {
      // No other source to fall back on: stop the process rather than hand
      // out predictable bytes.
      RaiseFailFastException(NULL, NULL, 0);
    }
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
  (void)instance;
  (void)reason;
  (void)reserved;
  return TRUE;
}
