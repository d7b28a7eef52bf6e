// Stands in for a side-effect CSS import in the element's library build (see vite.config.ts).
export {};
