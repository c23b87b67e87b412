// The rule for a suggested download filename (Content-Disposition), applied to a literal name
// at compile time and to an expanded template at request time.

const DOWNLOAD_FILENAME = /^[A-Za-z0-9_.-]+$/;

/** null when the name may be suggested, else why not. */
export function downloadFilenameRefusal(filename: string): string | null {
  if (!DOWNLOAD_FILENAME.test(filename)) return `the download filename "${filename}" may only contain A-Z, a-z, 0-9, "_", "." and "-"`;
  // "." and ".." pass the character rule but name directories: a client that saves under the
  // suggested name (curl -OJ, scripts) must never be pointed at one.
  if (/^\.+$/.test(filename)) return `the download filename "${filename}" must contain a character other than "."`;
  return null;
}
