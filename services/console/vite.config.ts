import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built assets land in dist/ with content hashes in their names (the edge caches them for a year);
// no inline script or module preload polyfill, so the edge's Content-Security-Policy can forbid both.
export default defineConfig({
  plugins: [react()],
  // The workspace root holds another React (tap's reporter, 18): the app and its libraries use this package's one.
  resolve: { dedupe: ['react', 'react-dom'] },
  build: { outDir: 'dist', emptyOutDir: true, assetsInlineLimit: 0, modulePreload: { polyfill: false }, sourcemap: false, target: 'es2022' },
});
