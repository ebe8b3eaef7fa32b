/**
 * Client hooks shared by the timeline components.
 */
import { useLayoutEffect, useState, useSyncExternalStore } from "react";

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
 * ref held in state). Output: its content-box width, or `fallback` until it has been measured. Measured once
 * before the browser paints (a layout effect), so the server's guess is never painted after hydration.
 */
export function useElementWidth(element: Element | null, fallback: number): number {
  const [width, setWidth] = useState<number | null>(null);
  useLayoutEffect(() => {
    if (!element) return;
    const first = Math.floor(element.getBoundingClientRect().width);
    // Reading layout before paint is what a layout effect is for: the re-render happens before anything is painted.
    // eslint-disable-next-line react-hooks/set-state-in-effect
    if (first > 0) setWidth(first);
    const observer = new ResizeObserver((entries) => {
      const w = entries[0]?.contentRect.width;
      if (w !== undefined && w > 0) setWidth(Math.floor(w));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [element]);
  return width ?? fallback;
}
