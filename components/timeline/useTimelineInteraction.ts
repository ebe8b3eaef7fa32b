"use client";

/**
 * Pointer and keyboard interaction of the timeline: wheel to zoom (Shift or a sideways wheel pans), drag to pan,
 * Shift-drag to zoom to a range (the brush), clicks that select (not after a drag), bins that zoom in, and the keys
 * (←/→ step through events, Home/End, Esc clears, + / − zoom, 0 fits). Works in virtual time (idle stretches short).
 */
import { linearScale, type LinearScale } from "./scale";
import {
  useEffect,
  useRef,
  useState,
  type Dispatch,
  type KeyboardEvent as ReactKeyboardEvent,
  type PointerEvent as ReactPointerEvent,
  type RefObject,
  type SetStateAction,
} from "react";
import type { StoredEvent } from "@/lib/contract/api";
import { MIN_SPAN_MS, PAD_R, toRealDomain, toVirtualDomain, type Drag, type Hover } from "./constants";
import { neighbourId, panDomain, zoomDomain, type Domain, type MarkBin, type TimedEvent, type TimeWarp } from "./model";

/** What the interaction reads from the timeline. */
export type InteractionInput = {
  svgRef: RefObject<SVGSVGElement | null>;
  /** Plot area in px. */
  x0: number;
  x1: number;
  /** The fitted window and the current one (virtual time), and virtual time → px. */
  fit: Domain;
  domain: Domain;
  xv: LinearScale;
  maxSpan: number;
  warp: TimeWarp;
  sorted: readonly TimedEvent[];
  byId: ReadonlyMap<string, TimedEvent>;
  selectedId: string | null;
  onSelect: (id: string | null) => void;
  accept: (e: Pick<StoredEvent, "plane" | "type">) => boolean;
  /** The zoomed window in real time (null: fit), and a setter taking virtual time. */
  setViewDomain: Dispatch<SetStateAction<Domain | null>>;
  setVirtualDomain: (d: Domain | null) => void;
  setHover: (h: Hover | null) => void;
};

/**
 * The timeline's handlers. Returns the SVG's pointer and key handlers, `select` (a click that is not the end of a
 * drag), `zoomBy`, `openBin`, the brush being drawn (px) and whether a drag is under way.
 */
export function useTimelineInteraction({
  svgRef,
  x0,
  x1,
  fit,
  domain,
  xv,
  maxSpan,
  warp,
  sorted,
  byId,
  selectedId,
  onSelect,
  accept,
  setViewDomain,
  setVirtualDomain,
  setHover,
}: InteractionInput) {
  const dragRef = useRef<Drag | null>(null);
  const suppressClickRef = useRef(false);
  const [brush, setBrush] = useState<{ a: number; b: number } | null>(null);
  const [dragging, setDragging] = useState(false);
  const [d0, d1] = domain;

  useEffect(() => {
    const svg = svgRef.current;
    if (!svg) return;
    const onWheel = (e: WheelEvent) => {
      const rect = svg.getBoundingClientRect();
      const px = e.clientX - rect.left;
      if (px < x0 || px > x1 + PAD_R) return; // over the lane labels: let the page scroll
      e.preventDefault();
      const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? rect.height : 1;
      const dx = e.deltaX * unit;
      const dy = e.deltaY * unit;
      setHover(null);
      setViewDomain((prev) => {
        const d = prev ? toVirtualDomain(warp, prev) : fit;
        const s = linearScale(d, [x0, x1]);
        if (e.shiftKey || Math.abs(dx) > Math.abs(dy)) {
          const delta = Math.abs(dx) > Math.abs(dy) ? dx : dy;
          return toRealDomain(warp, panDomain(d, s.invert(x0 + delta) - d[0]));
        }
        return toRealDomain(warp, zoomDomain(d, Math.exp(dy * 0.0015), s.invert(px), MIN_SPAN_MS, maxSpan));
      });
    };
    svg.addEventListener("wheel", onWheel, { passive: false });
    return () => svg.removeEventListener("wheel", onWheel);
  }, [svgRef, x0, x1, fit, maxSpan, warp, setHover, setViewDomain]);

  const localX = (e: { clientX: number }) => e.clientX - (svgRef.current?.getBoundingClientRect().left ?? 0);
  const clampX = (x: number) => Math.min(x1, Math.max(x0, x));

  const onPointerDown = (e: ReactPointerEvent<SVGSVGElement>) => {
    suppressClickRef.current = false;
    if (e.button !== 0) return;
    const px = localX(e);
    if (px < x0 - 4) return;
    dragRef.current = {
      pointerId: e.pointerId,
      startX: px,
      startDomain: domain,
      mode: e.shiftKey ? "brush" : "pan",
      moved: false,
    };
  };
  const onPointerMove = (e: ReactPointerEvent<SVGSVGElement>) => {
    const drag = dragRef.current;
    if (!drag || drag.pointerId !== e.pointerId) return;
    const px = localX(e);
    if (!drag.moved) {
      if (Math.abs(px - drag.startX) < 4) return;
      drag.moved = true;
      e.currentTarget.setPointerCapture(e.pointerId);
      setDragging(true);
      setHover(null);
    }
    if (drag.mode === "brush") {
      setBrush({ a: clampX(drag.startX), b: clampX(px) });
    } else {
      const s = linearScale(drag.startDomain, [x0, x1]);
      setVirtualDomain(panDomain(drag.startDomain, s.invert(drag.startX) - s.invert(px)));
    }
  };
  const endDrag = (e: ReactPointerEvent<SVGSVGElement>, commit: boolean) => {
    const drag = dragRef.current;
    dragRef.current = null;
    if (!drag || drag.pointerId !== e.pointerId) return;
    if (!drag.moved) return;
    suppressClickRef.current = true;
    if (e.currentTarget.hasPointerCapture(e.pointerId)) e.currentTarget.releasePointerCapture(e.pointerId);
    setDragging(false);
    if (drag.mode === "brush") {
      const a = clampX(drag.startX);
      const b = clampX(localX(e));
      if (commit && Math.abs(b - a) >= 4) {
        const t0 = xv.invert(Math.min(a, b));
        const t1 = xv.invert(Math.max(a, b));
        const mid = (t0 + t1) / 2;
        const span = Math.max(t1 - t0, MIN_SPAN_MS);
        setVirtualDomain([mid - span / 2, mid + span / 2]);
      }
      setBrush(null);
    }
  };

  const select = (id: string) => {
    if (suppressClickRef.current) {
      suppressClickRef.current = false;
      return;
    }
    onSelect(id);
  };

  const zoomBy = (factor: number) => {
    const sel = selectedId !== null ? byId.get(selectedId) : undefined;
    const selV = sel ? warp.toVirtual(sel.t) : NaN;
    const anchor = selV >= d0 && selV <= d1 ? selV : (d0 + d1) / 2;
    setVirtualDomain(zoomDomain(domain, factor, anchor, MIN_SPAN_MS, maxSpan));
  };

  const openBin = (bin: MarkBin) => {
    if (suppressClickRef.current) {
      suppressClickRef.current = false;
      return;
    }
    const spread = bin.last - bin.first;
    const span = spread > 0 ? Math.max(spread * 1.6, MIN_SPAN_MS) : Math.max((d1 - d0) / 8, MIN_SPAN_MS);
    const mid = (bin.first + bin.last) / 2;
    setVirtualDomain([mid - span / 2, mid + span / 2]);
    const first = bin.ids[0];
    if (first !== undefined && bin.unloaded === 0) onSelect(first);
  };

  const onKeyDown = (e: ReactKeyboardEvent<SVGSVGElement>) => {
    setHover(null); // the tooltip follows the pointer; keyboard moves would leave it stale
    switch (e.key) {
      case "ArrowRight":
      case "ArrowLeft": {
        e.preventDefault();
        const id = neighbourId(sorted, selectedId, e.key === "ArrowRight" ? 1 : -1, accept);
        if (id !== null && id !== selectedId) onSelect(id);
        break;
      }
      case "Home":
      case "End": {
        e.preventDefault();
        const id = neighbourId(sorted, null, e.key === "Home" ? 1 : -1, accept);
        if (id !== null && id !== selectedId) onSelect(id);
        break;
      }
      case "Escape":
        if (selectedId !== null) {
          e.preventDefault();
          onSelect(null);
        }
        break;
      case "+":
      case "=":
        e.preventDefault();
        zoomBy(0.5);
        break;
      case "-":
      case "_":
        e.preventDefault();
        zoomBy(2);
        break;
      case "0":
        e.preventDefault();
        setViewDomain(null);
        break;
    }
  };

  return { onPointerDown, onPointerMove, endDrag, onKeyDown, select, zoomBy, openBin, brush, dragging };
}
