/**
 * Client hooks shared by the timeline components.
 */
import { useEffect, useState, useSyncExternalStore } from "react";

const subscribeNever = () => () => {};

/**
 * False during server rendering and hydration, true afterwards. Used to show browser-local times only
 * once they cannot mismatch the server's HTML (the server's zone is not the viewer's).
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    subscribeNever,
    () => true,
    () => false,
  );
}

/**
 * Width in px of an element, kept current with a ResizeObserver. Input: the element (from a callback
 * ref held in state). Output: its content-box width, or `fallback` until it has been measured.
 */
export function useElementWidth(element: Element | null, fallback: number): number {
  const [width, setWidth] = useState<number | null>(null);
  useEffect(() => {
    if (!element) return;
    const observer = new ResizeObserver((entries) => {
      const w = entries[0]?.contentRect.width;
      if (w !== undefined && w > 0) setWidth(Math.floor(w));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [element]);
  return width ?? fallback;
}
