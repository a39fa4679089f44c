// PLACEHOLDER (being written): the shared tesseract.js worker.

/** Stops the OCR worker, if one was started (the indexing thread calls it before it exits). */
export async function shutdownOcr(): Promise<void> {}
